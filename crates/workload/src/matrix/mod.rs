//! The throughput matrix: iozone's automatic mode, measured honestly.
//!
//! For every file size x record size cell (record <= file), each selected test runs its phases
//! (write then rewrite, read then reread, ...) on one test file in the given directory. A phase
//! repeats its pass until a minimum measured time is reached, keeping each pass's semantics (a
//! write pass starts from a fresh file, a rewrite from a written one), so small cells are not
//! quantised by the clock as iozone's one-pass timing is.
//!
//! Flow: [`MatrixSpec`] (what the user asked) -> [`MatrixSpec::plan`] validates it into a
//! [`MatrixPlan`] (cells, phases; no side effects) -> [`MatrixPlan::preflight`] checks the
//! directory -> [`run`] measures, reporting each [`CellResult`] to a [`MatrixObserver`] as
//! soon as it exists; [`results`] declares the figures each result carries.

pub mod results;
mod run;
mod spec;
mod test;

pub use run::{run, CellResult, MatrixObserver, MatrixOutcome, NoObserver};
pub use spec::{Cell, MatrixPlan, MatrixSpec, SkippedCell, BUFFERED_READ_OFFSET, MAX_RECORD_BYTES};
pub use test::{Access, Api, Direction, MatrixTest, Phase};
