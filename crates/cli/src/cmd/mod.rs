//! One module per subcommand; each turns its flags into the layers' types and runs them.

pub mod cleanup;
pub mod matrix;
pub mod targets;
