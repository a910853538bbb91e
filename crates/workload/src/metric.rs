//! The names of the metrics workloads are stored under: one spelling for the campaign runner
//! that writes them and the reports that read them, and which of them are a workload's main
//! figure (what summaries show and adaptive repetitions watch).

/// Suffix of a matrix cell's throughput metric (B/s).
const THROUGHPUT: &str = " throughput";

/// `write 16m/4k throughput`: bytes per second of one phase of one matrix cell.
pub fn throughput(cell: &str) -> String {
    format!("{cell}{THROUGHPUT}")
}

/// `write 16m/4k ops`: operations per second.
pub fn ops(cell: &str) -> String {
    format!("{cell} ops")
}

/// `write 16m/4k p99 latency`: 99th percentile of the operation latency, ns.
pub fn p99_latency(cell: &str) -> String {
    format!("{cell} p99 latency")
}

/// The sleep workload's one metric: how long it slept, ns.
pub const SLEPT: &str = "slept";

/// Whether a metric is its workload's main figure.
pub fn is_main(name: &str) -> bool {
    name.ends_with(THROUGHPUT) || name == SLEPT
}

/// A main metric's name without its kind, for table rows (`write 16m/4k`).
pub fn row_label(name: &str) -> &str {
    name.strip_suffix(THROUGHPUT).unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let cell = "write 64k/16k";
        assert!(is_main(&throughput(cell)) && is_main(SLEPT));
        assert!(!is_main(&ops(cell)) && !is_main(&p99_latency(cell)));
        assert_eq!(row_label(&throughput(cell)), cell);
        assert_eq!(row_label(SLEPT), SLEPT);
    }
}
