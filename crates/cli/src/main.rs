//! `fsbench`: the command line. Parses flags, wires the layers together, draws progress and
//! prints; the only crate that writes to the terminal.
//!
//! Flow of a workload command (`fsbench matrix`, `fsbench metadata`, ...): flags -> the
//! workload's settings (one type per workload, from the registry) -> check -> the target
//! (`--fs`) or the directory -> preflight -> the workload, in process -> one stored sample ->
//! `ReportModel` -> terminal (grid or table), JSON, CSV: a one-case run.
//!
//! Flow of `fsbench run`: plan file or profile -> `Plan` (validated, no side effects) ->
//! `Store::begin_run` -> `Campaign::run` (per sample: target, child `case-worker`, record) ->
//! `Store::load` -> summary.

#![deny(clippy::print_stdout, clippy::print_stderr)]

mod cli;
mod cmd;
mod exit;
mod frontend;
mod out;
mod outfile;
mod progress;

use clap::Parser;

fn main() {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // A value a flag cannot take: one line, like every other usage error (clap adds a
            // blank line and a hint to try --help).
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::ValueValidation | ErrorKind::InvalidValue
            ) {
                let text = e.to_string();
                let first = text.lines().next().unwrap_or_default();
                out::stderr_line(format_args!("{first}"));
                std::process::exit(exit::USAGE);
            }
            // --help, --version and usage errors: a help text that cannot be written is not a
            // success (clap's own exit would say 0).
            let printed = e.print();
            let code = match (e.exit_code(), printed) {
                (0, Err(_)) => exit::FAILED,
                (code, _) => code,
            };
            std::process::exit(code);
        }
    };
    // The guard measures nothing: it must not fail on a clock, nor spend 10 ms calibrating
    // one while its parent's targets wait.
    let command = match cli.command {
        cli::Command::Guard(args) => std::process::exit(exit::report(cmd::cleanup::guard(args))),
        command => command,
    };
    // Chosen (and calibrated) before any workload runs, so a bad FSBENCH_CLOCK is one line.
    if let Err(e) = fsbench_measure::Clock::configure() {
        std::process::exit(exit::report(Err(exit::Failure::usage(anyhow::anyhow!(e)))));
    }
    let outcome = match command {
        cli::Command::Workload(command) => {
            let cli::WorkloadCommand { settings, options } = *command;
            cmd::workload::run(settings, options)
        }
        cli::Command::Run(args) => cmd::run::run(args),
        cli::Command::Profiles(args) => cmd::profiles::run(args),
        cli::Command::Runs(args) => cmd::runs::run(args),
        cli::Command::Export(args) => cmd::export::run(args),
        cli::Command::Report(args) => cmd::report::run(args),
        cli::Command::Compare(args) => cmd::report::compare(args),
        cli::Command::CaseWorker(args) => cmd::case_worker::run(args),
        cli::Command::Guard(_) => unreachable!("the guard is dispatched above"),
        cli::Command::Targets(args) => cmd::targets::run(args),
        cli::Command::Cleanup(args) => cmd::cleanup::run(args),
        cli::Command::CrashState(args) => cmd::crash_state::run(args),
        cli::Command::Trace(args) => cmd::trace::run(args),
        cli::Command::Record(args) => cmd::record::run(args),
    };
    std::process::exit(exit::report(outcome));
}
