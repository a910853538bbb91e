//! `fsbench`: the command line. Parses flags, wires the layers together, draws progress and
//! prints; the only crate that writes to the terminal.
//!
//! Flow of `fsbench matrix`: flags -> `MatrixSpec` -> `plan()` (validation, no side effects)
//! -> `preflight(dir)` -> `matrix::run` (results stream to the progress observer) ->
//! `MatrixDocument` -> terminal grid, JSON, CSV. With `--fs`, the workload runs inside a
//! `Target` (prepared before, finished after, torn down on every path).
//!
//! Flow of `fsbench run`: plan file or profile -> `Plan` (validated, no side effects) ->
//! `Store::begin_run` -> `Campaign::run` (per sample: target, child `case-worker`, record) ->
//! `Store::load` -> summary.

#![deny(clippy::print_stdout, clippy::print_stderr)]

mod cli;
mod cmd;
mod exit;
mod out;
mod progress;
mod target;

use clap::Parser;

fn main() {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
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
    // Chosen (and calibrated) before any workload runs, so a bad FSBENCH_CLOCK is one line.
    if let Err(e) = fsbench_measure::Clock::configure() {
        std::process::exit(exit::report(Err(exit::Failure::usage(anyhow::anyhow!(e)))));
    }
    let outcome = match cli.command {
        cli::Command::Matrix(args) => cmd::matrix::run(*args),
        cli::Command::Run(args) => cmd::run::run(args),
        cli::Command::Runs(args) => cmd::runs::run(args),
        cli::Command::Export(args) => cmd::export::run(args),
        cli::Command::CaseWorker(args) => cmd::case_worker::run(args),
        cli::Command::Targets(args) => cmd::targets::run(args),
        cli::Command::Cleanup(args) => cmd::cleanup::run(args),
    };
    std::process::exit(exit::report(outcome));
}
