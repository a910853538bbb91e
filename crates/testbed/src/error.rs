//! Errors of the target layer. Each message is one line saying what happened and what to do.

use crate::system::{Cmd, CmdOutput};
use fsbench_model::Outcome;
use std::io;
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum TargetError {
    /// The request is malformed (unknown filesystem, bad size); nothing was touched.
    #[error("{0}")]
    Invalid(String),
    /// This host cannot run the configuration: the kernel lacks the filesystem, a tool is
    /// missing, or the kernel rejected an option. A result, not a crash.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A real device failed a safety check; nothing was written to it.
    #[error("refused: {0}")]
    Refused(String),
    /// A command failed.
    #[error("{step} failed: `{cmd}` exited with {status}: {detail}; {hint}")]
    Command {
        step: &'static str,
        cmd: String,
        status: String,
        detail: String,
        hint: String,
    },
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// Aging a filesystem failed (`crate::aging`); what was made has been undone.
    #[error("aging failed: {0}")]
    Aging(String),
    /// A stop was requested while preparing; what was made has been undone.
    #[error("interrupted")]
    Interrupted,
}

impl TargetError {
    pub fn command(step: &'static str, cmd: &Cmd, output: &CmdOutput, hint: &str) -> TargetError {
        TargetError::Command {
            step,
            cmd: cmd.to_string(),
            status: output
                .status
                .map_or_else(|| "a signal".to_string(), |s| s.to_string()),
            detail: output.last_line(),
            hint: hint.to_string(),
        }
    }

    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> TargetError {
        TargetError::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// How a case that could not be prepared ended: unsupported, interrupted or failed; None for
    /// a mistake in the request (invalid, refused device), which is a usage error (exit 2) and
    /// no result at all.
    pub fn outcome(&self) -> Option<Outcome> {
        match self {
            TargetError::Unsupported(_) => Some(Outcome::Unsupported),
            TargetError::Refused(_) | TargetError::Invalid(_) => None,
            TargetError::Interrupted => Some(Outcome::Interrupted),
            _ => Some(Outcome::Failed),
        }
    }
}

/// Interrupted, when `stop` says so (Ctrl-C): polled between the steps of making something.
pub(crate) fn check_stop(stop: &dyn Fn() -> bool) -> Result<(), TargetError> {
    if stop() {
        Err(TargetError::Interrupted)
    } else {
        Ok(())
    }
}

/// Why `cmd` could not be run: not installed (unsupported here), or another reason.
pub(crate) fn missing_tool(cmd: &Cmd, e: std::io::Error) -> TargetError {
    if e.kind() == std::io::ErrorKind::NotFound {
        TargetError::Unsupported(format!("{} is not installed", cmd.program))
    } else {
        TargetError::Invalid(format!("cannot run {}: {e}", cmd.program))
    }
}
