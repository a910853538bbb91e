//! An application's file-system calls, recorded once and replayed on every configuration: the
//! trace's vocabulary ([`event`]), its file format ([`format`], docs/trace-format.md), the tree
//! the application found ([`tree`]), paths relative to the recorded root ([`path`]), what a
//! trace holds ([`stats`]) and names hashed away ([`anonymise`]).
//!
//! The recorder (`fsbench record`) writes traces; the `replay` workload reads them. This crate
//! knows neither: it is the contract between them.

pub mod anonymise;
pub mod event;
pub mod format;
pub mod path;
pub mod stats;
pub mod tree;

pub use event::{Event, Op, Woken};
pub use format::{
    check_replaceable, End, Header, Trace, TraceError, TraceWriter, FORMAT_VERSION, MAGIC,
};
pub use tree::{Node, NodeKind};
