//! Exit codes, and the one-line error message every failure ends with (a rank of a job's, too).
//! The codes of results come from [`Outcome::exit_code`]; 2 (a usage error: nothing was
//! measured) is the CLI's own.

use crate::out::note;
use fsbench_measure::host::ProbeHost;
use fsbench_model::Outcome;

/// Success.
pub const OK: i32 = Outcome::Ok.exit_code();
/// The run failed while measuring (I/O error, full disk); finished results were written.
pub const FAILED: i32 = Outcome::Failed.exit_code();
/// The command line or the directory is wrong; nothing was measured.
pub const USAGE: i32 = 2;
/// The host cannot run the configuration (kernel lacks the filesystem, a tool is missing, the
/// kernel rejected an option); nothing is left behind.
pub const UNSUPPORTED: i32 = Outcome::Unsupported.exit_code();
/// Stopped by Ctrl-C or SIGTERM; finished results were written.
pub const INTERRUPTED: i32 = Outcome::Interrupted.exit_code();

/// An error with the exit code it deserves.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub error: anyhow::Error,
    /// Nothing to say: the exit code is the whole story (standard output closed by its reader).
    pub silent: bool,
}

impl Failure {
    pub fn usage(error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code: USAGE,
            error: error.into(),
            silent: false,
        }
    }

    pub fn failed(error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code: FAILED,
            error: error.into(),
            silent: false,
        }
    }

    /// Ends with `code` and no message.
    pub fn quiet(code: i32) -> Failure {
        Failure {
            code,
            error: anyhow::anyhow!("(no message)"),
            silent: true,
        }
    }
}

impl From<fsbench_testbed::TargetError> for Failure {
    fn from(error: fsbench_testbed::TargetError) -> Failure {
        let code = error.outcome().map_or(USAGE, Outcome::exit_code);
        Failure {
            code,
            error: error.into(),
            silent: false,
        }
    }
}

impl From<fsbench_plan::run::RunError> for Failure {
    fn from(error: fsbench_plan::run::RunError) -> Failure {
        match error {
            fsbench_plan::run::RunError::Target(error) => error.into(),
            error if error.is_mistake() => Failure::usage(error),
            error => Failure::failed(error),
        }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Failure {
        Failure::failed(error)
    }
}

/// The error as one line: the chain joined by ": ", without the causes a message already
/// quotes (`cannot create X: File too large` is not followed by `File too large` again).
pub fn one_line(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain().map(|e| e.to_string()) {
        if text.contains(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    text.replace('\n', " ")
}

/// Several steps that were each tried (the outputs of one command): every failure is
/// reported, the last one is the command's.
pub fn all_of(outcomes: impl IntoIterator<Item = Result<(), Failure>>) -> Result<(), Failure> {
    let mut failures: Vec<Failure> = outcomes.into_iter().filter_map(Result::err).collect();
    let last = failures.pop();
    for failure in failures {
        report(Err(failure));
    }
    last.map_or(Ok(()), Err)
}

/// A rank's end: one that stops with an error before the ranks have met for the last time
/// (`met`) would leave the others waiting for it, so it says why, naming itself, and ends the
/// job. Alone, or after the last meeting: the result as it is.
pub fn end_rank(
    job: Option<&dyn fsbench_scale::Collective>,
    met: bool,
    result: Result<i32, Failure>,
) -> Result<i32, Failure> {
    match (job, result) {
        (Some(job), Err(mut failure)) if !met => {
            failure.error = failure.error.context(format!(
                "rank {} of {} (host {})",
                job.rank(),
                job.size(),
                fsbench_measure::host::HostInfo::probe().hostname
            ));
            let code = report(Err(failure));
            job.abort(code)
        }
        (_, result) => result,
    }
}

/// Prints the error (one line, best effort: standard error may be unwritable too) and returns
/// the exit code.
pub fn report(outcome: Result<i32, Failure>) -> i32 {
    match outcome {
        Ok(code) => code,
        Err(failure) => {
            if !failure.silent {
                // A message may quote a name from a plan or a database: no control characters.
                let line = one_line(&failure.error);
                note!("error: {}", fsbench_report::terminal::printable(&line));
            }
            failure.code
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_the_message_quotes_is_not_repeated() {
        let io = std::io::Error::from_raw_os_error(27);
        let error = anyhow::Error::new(fsbench_testbed::TargetError::io(
            "create the image",
            "/w/x.img",
            io,
        ));
        let text = one_line(&error);
        assert_eq!(text.matches("File too large").count(), 1, "{text}");
        let error = anyhow::anyhow!("inner").context("outer");
        assert_eq!(one_line(&error), "outer: inner");
    }
}
