//! The io workload on real files: counts against bytes, both engines, time and size bounds,
//! pacing, a file truncated under the reader, the data written, the seam's calls.

use super::*;
use crate::harness::Detached;
use crate::workload::Collect;
use fsbench_measure::units::{Size, TimeSpan};
use fsbench_model::ResultRecord;
use std::path::PathBuf;

fn run_in(dir: &Path, settings: &IoSettings) -> (End, Collect) {
    let mut sink = Collect::default();
    let end = settings.run(
        &Context::default(),
        dir,
        &StopFlag::new(),
        &mut sink,
        &mut Detached,
    );
    (end, sink)
}

fn value(r: &ResultRecord, metric: &str) -> f64 {
    r.measurement(metric)
        .unwrap_or_else(|| panic!("no {metric} in {r:?}"))
        .value
}

fn bins(r: &ResultRecord) -> u64 {
    r.latency_bins.iter().map(|b| b.1).sum()
}

/// A size-bound run moves exactly its files: every operation issued completes and is counted
/// once (operations x bs = bytes = threads x size), in its direction's histogram too, for
/// either engine, any depth and batching; the ring really had operations in flight at once;
/// nothing is left in the directory.
#[test]
fn every_operation_is_counted_once_and_a_pass_moves_exactly_the_files() {
    let cases = [
        (Engine::Sync, Rw::RandRead, 1, 1, 1),
        (Engine::Sync, Rw::RandRw, 1, 1, 1),
        (Engine::IoUring, Rw::RandRead, 1, 1, 1),
        (Engine::IoUring, Rw::RandRead, 32, 0, 4),
        (Engine::IoUring, Rw::RandWrite, 32, 8, 0),
        (Engine::IoUring, Rw::RandRw, 16, 0, 1),
        (Engine::IoUring, Rw::Read, 8, 0, 8),
        (Engine::IoUring, Rw::Write, 4, 2, 2),
    ];
    for (engine, rw, iodepth, batch_submit, batch_complete) in cases {
        let dir = tempfile::tempdir().unwrap();
        let settings = IoSettings {
            rw,
            engine,
            iodepth,
            iodepth_batch_submit: batch_submit,
            iodepth_batch_complete: batch_complete,
            size: Size(1 << 20),
            threads: 2,
            ..IoSettings::default()
        };
        let case = format!("{engine} {rw} depth {iodepth}");
        let (end, sink) = run_in(dir.path(), &settings);
        assert_eq!(end.outcome, Outcome::Ok, "{case}: {:?}", end.error);
        let expected_records = usize::from(rw.reads()) + usize::from(rw.writes());
        assert_eq!(sink.records.len(), expected_records, "{case}");
        let mut ops = 0.0;
        for r in &sink.records {
            assert_eq!(value(r, "bytes"), value(r, "ops") * 4096.0, "{case}: {r:?}");
            assert_eq!(
                bins(r) as f64,
                value(r, "ops"),
                "{case}: every op in the histogram"
            );
            assert_eq!(r.dims.engine.as_deref(), Some(engine.name()));
            assert_eq!(r.dims.iodepth, Some(u64::from(iodepth)));
            assert_eq!(r.dims.phase.as_deref(), Some(rw.name()));
            assert_eq!(r.main().unwrap().metric, "ops_rate");
            assert!(value(r, "cpu_per_op") > 0.0, "{case}");
            let in_flight = r.attributes["in_flight_max"].as_u64().unwrap();
            assert!(in_flight <= u64::from(iodepth), "{case}: {in_flight}");
            if batch_submit == 0 && iodepth > 1 {
                assert!(in_flight > 1, "{case}: the ring held one at a time");
            }
            assert_eq!(
                engine == Engine::IoUring,
                r.measurement("slat_p99").is_some()
            );
            ops += value(r, "ops");
        }
        assert_eq!(
            ops,
            2.0 * 256.0,
            "{case}: two files of 256 blocks, each once"
        );
        if rw == Rw::RandRw {
            let reads = value(&sink.records[0], "ops");
            assert!(
                (128.0..=384.0).contains(&reads),
                "{case}: {reads} of 512 read"
            );
        }
        assert!(
            std::fs::read_dir(dir.path()).unwrap().next().is_none(),
            "{case}: files left"
        );
    }
}

/// `time_based` goes over the file again and again until the runtime, then waits for what
/// is in flight; a runtime without it ends a pass early when the pass is longer.
#[test]
fn a_time_based_run_lasts_its_runtime_and_counts_what_completed() {
    let dir = tempfile::tempdir().unwrap();
    let settings = IoSettings {
        iodepth: 8,
        size: Size(256 << 10),
        runtime: TimeSpan::from_ns(200_000_000),
        time_based: true,
        ..IoSettings::default()
    };
    let (end, sink) = run_in(dir.path(), &settings);
    assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
    let r = &sink.records[0];
    assert!(value(r, "ops") > 64.0, "more than one pass: {r:?}");
    let elapsed = value(r, "elapsed");
    assert!((2e8..1e9).contains(&elapsed), "{elapsed}");
    assert_eq!(r.attributes["time_based"], true);
    assert_eq!(bins(r) as f64, value(r, "ops"));
}

/// Pacing holds the asked rate over a second — never above it by more than 2 %, nor below
/// by more than 7 % (a stall of the loaded host's across the deadline ends the count early):
/// per thread, and in total split over the threads; the latency is the operation's own, not
/// the wait before it. (That the schedule catches up after a stall: `pace.rs`.)
#[test]
fn a_rate_cap_holds_within_two_percent_over_a_second() {
    for (engine, iodepth, threads, rate_total) in [
        (Engine::Sync, 1, 1, false),
        (Engine::IoUring, 4, 1, false),
        (Engine::IoUring, 4, 2, true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let settings = IoSettings {
            engine,
            iodepth,
            threads,
            rate_iops: 2000,
            rate_total,
            size: Size(4 << 20),
            runtime: TimeSpan::from_ns(1_000_000_000),
            time_based: true,
            ..IoSettings::default()
        };
        let (end, sink) = run_in(dir.path(), &settings);
        assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
        let r = &sink.records[0];
        let expected = if rate_total {
            2000.0
        } else {
            2000.0 * threads as f64
        };
        let rate = value(r, "ops_rate");
        assert!(
            (0.93..1.02).contains(&(rate / expected)),
            "{engine} x{threads}: {rate} ops/s for {expected}"
        );
        assert!(
            value(r, "latency_p50") < 500_000.0,
            "{engine}: a paced wait counted as latency: {r:?}"
        );
    }
}

/// A file truncated under the reader: the read past its new end is a short read that ends
/// the run as failed, saying so; what was measured up to it is kept, marked partial.
#[test]
fn a_file_truncated_under_the_reader_ends_the_run_with_what_was_measured() {
    for engine in [Engine::Sync, Engine::IoUring] {
        let dir = tempfile::tempdir().unwrap();
        let settings = IoSettings {
            engine,
            iodepth: if engine == Engine::Sync { 1 } else { 16 },
            size: Size(4 << 20),
            runtime: TimeSpan::from_ns(5_000_000_000),
            time_based: true,
            ..IoSettings::default()
        };
        let path = dir.path().to_path_buf();
        // Raised when the timed phase starts (after the layout and the untimed buffer
        // calibration, however long those take on a loaded host).
        let started_phase = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let phase = started_phase.clone();
        let cutter = std::thread::spawn(move || {
            // Wait for the timed phase, then cut the laid-out file.
            let start = std::time::Instant::now();
            loop {
                let file = std::fs::read_dir(&path)
                    .unwrap()
                    .flatten()
                    .find(|e| e.file_name().to_string_lossy().starts_with("fsbench-io-"));
                let timed = phase.load(std::sync::atomic::Ordering::Acquire);
                if let (Some(file), true) = (file, timed) {
                    if file.metadata().unwrap().len() == 4 << 20 {
                        std::thread::sleep(std::time::Duration::from_millis(300));
                        std::fs::OpenOptions::new()
                            .write(true)
                            .open(file.path())
                            .unwrap()
                            .set_len(4096)
                            .unwrap();
                        return;
                    }
                }
                assert!(start.elapsed().as_secs() < 30, "no timed phase began");
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        });
        /// Says when the timed phase starts, and keeps when.
        struct Starting(
            std::sync::Arc<std::sync::atomic::AtomicBool>,
            Option<std::time::Instant>,
        );
        impl Harness for Starting {
            fn cold(&mut self) -> Result<String, String> {
                Detached.cold()
            }
            fn drop_caches(&mut self) -> Result<String, String> {
                Detached.drop_caches()
            }
            fn evict(&mut self, p: &Path, o: u64, l: u64) -> Result<Option<f64>, String> {
                Detached.evict(p, o, l)
            }
            fn resident(&mut self, p: &Path, o: u64, l: u64) -> Result<f64, String> {
                Detached.resident(p, o, l)
            }
            fn phase_start(&mut self) -> bool {
                self.1 = Some(std::time::Instant::now());
                self.0.store(true, std::sync::atomic::Ordering::Release);
                true
            }
        }
        let mut sink = Collect::default();
        let mut harness = Starting(started_phase, None);
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut harness,
        );
        cutter.join().unwrap();
        assert_eq!(end.outcome, Outcome::Failed, "{engine}");
        // Its runtime is 5 s: it ended at the short read, not at its time.
        let timed = harness.1.expect("a timed phase").elapsed();
        assert!(timed.as_secs() < 4, "{engine}: the run went on ({timed:?})");
        let message = end.error.unwrap().to_string();
        assert!(
            message.starts_with("cannot read ")
                && message.contains("during at offset")
                && message.contains("the file is shorter than expected"),
            "{engine}: {message}"
        );
        let r = &sink.records[0];
        assert_eq!(r.attributes["partial"], true, "{engine}");
        assert!(value(r, "ops") > 0.0 && bins(r) as f64 == value(r, "ops"));
        assert!(
            std::fs::read_dir(dir.path()).unwrap().next().is_none(),
            "{engine}: files left"
        );
    }
}

/// Every block a write-only run writes is incompressible and unique: io_uring's slot
/// buffers, written again and again, are stamped before each write.
#[test]
fn written_blocks_are_all_distinct_with_either_engine() {
    for (engine, iodepth) in [(Engine::Sync, 1), (Engine::IoUring, 8)] {
        let dir = tempfile::tempdir().unwrap();
        let settings = IoSettings {
            rw: Rw::RandWrite,
            engine,
            iodepth,
            fixedbufs: engine == Engine::IoUring,
            registerfiles: engine == Engine::IoUring,
            size: Size(2 << 20),
            keep: true,
            ..IoSettings::default()
        };
        let (end, _) = run_in(dir.path(), &settings);
        assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
        assert_eq!(end.kept.len(), 1);
        let content = std::fs::read(&end.kept[0]).unwrap();
        assert_eq!(content.len(), 2 << 20);
        let blocks: std::collections::HashSet<&[u8]> = content.chunks(4096).collect();
        assert_eq!(blocks.len(), 512, "{engine}: a block repeated");
        assert!(content.chunks(4096).all(|b| b.iter().any(|&x| x != 0)));
    }
}

/// The seam: the phase starts once, through `phase_start` (false: the run ends interrupted
/// and leaves nothing); a case that asks for a cold cache gets one after the layout.
#[test]
fn the_phase_meets_once_and_a_cold_case_asks_for_a_cold_cache() {
    #[derive(Default)]
    struct Meetings {
        phases: u32,
        colds: u32,
        go: bool,
    }
    impl crate::Harness for Meetings {
        fn cold(&mut self) -> Result<String, String> {
            self.colds += 1;
            Ok("remounted".into())
        }
        fn drop_caches(&mut self) -> Result<String, String> {
            Detached.drop_caches()
        }
        fn evict(&mut self, p: &Path, o: u64, l: u64) -> Result<Option<f64>, String> {
            Detached.evict(p, o, l)
        }
        fn resident(&mut self, p: &Path, o: u64, l: u64) -> Result<f64, String> {
            Detached.resident(p, o, l)
        }
        fn phase_start(&mut self) -> bool {
            self.phases += 1;
            self.go
        }
    }
    let settings = IoSettings {
        rw: Rw::RandRw,
        size: Size(256 << 10),
        ..IoSettings::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let cold = Context {
        cache: fsbench_model::CachePolicy::Drop,
        ..Context::default()
    };
    let mut harness = Meetings {
        go: true,
        ..Meetings::default()
    };
    let mut sink = Collect::default();
    let end = settings.run(&cold, dir.path(), &StopFlag::new(), &mut sink, &mut harness);
    assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
    assert_eq!(
        (harness.phases, harness.colds, sink.records.len()),
        (1, 1, 2)
    );
    let mut harness = Meetings::default();
    let mut sink = Collect::default();
    let end = settings.run(
        &Context::default(),
        dir.path(),
        &StopFlag::new(),
        &mut sink,
        &mut harness,
    );
    assert_eq!(end.outcome, Outcome::Interrupted);
    assert_eq!(
        (harness.phases, harness.colds, sink.records.len()),
        (1, 0, 0)
    );
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

/// Polled completion on a device without poll queues (this test's directory) is refused as
/// unsupported, naming the setting; so is an engine a host turned off — here io_uring works.
#[test]
fn polled_completion_is_probed_and_refused_where_the_device_cannot_poll() {
    let dir = tempfile::tempdir().unwrap();
    let settings = IoSettings {
        direct: true,
        hipri: true,
        size: Size(256 << 10),
        ..IoSettings::default()
    };
    let (end, sink) = run_in(dir.path(), &settings);
    assert_eq!(end.outcome, Outcome::Unsupported, "{:?}", end.error);
    let message = end.error.unwrap().to_string();
    assert!(
        message.starts_with("hipri: ") || message.starts_with("direct: "),
        "{message}"
    );
    assert!(sink.records.is_empty());
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

/// Settings as large as their types take (a runtime of 584 years, `--runtime 5124095h`; a
/// file of an exbibyte on each of 4096 threads) make no arithmetic overflow: the runtime's deadline, the
/// pace's due times and the estimate saturate (a bound never reached), and a size-bound run
/// still ends after its one pass. (Before: the deadline's sum overflowed, a panic in the
/// worker thread, or in a release build a deadline in the past that ended the run at once.)
#[test]
fn settings_as_large_as_their_types_saturate_instead_of_overflowing() {
    let dir = tempfile::tempdir().unwrap();
    let settings = IoSettings {
        size: Size(4096),
        runtime: TimeSpan::from_ns(u64::MAX),
        ..IoSettings::default()
    };
    let (end, sink) = run_in(dir.path(), &settings);
    assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
    assert_eq!(value(&sink.records[0], "ops"), 1.0);

    let clock = fsbench_measure::clock::Clock::get();
    let pace = pace::Pace::new(clock.ticks(), 3.6e12, clock);
    assert_eq!(
        pace.due(u64::MAX),
        u64::MAX,
        "due at the end of time, not wrapped"
    );

    let huge = IoSettings {
        size: Size(1 << 60),
        threads: 4096,
        runtime: TimeSpan::from_ns(u64::MAX),
        ..IoSettings::default()
    };
    assert_eq!(huge.estimate_ns(&Context::default()), u64::MAX);
}

/// A harness for `verify`'s tests: at the phase's start it calls `at_start` with the run's
/// files, at each eviction `on_evict` with the file (each stands for a device that lost or
/// changed a write); nothing else is available.
struct Faulty<S: FnMut(&[PathBuf]), E: FnMut(&Path)> {
    dir: PathBuf,
    at_start: S,
    on_evict: E,
    evicted: Vec<PathBuf>,
}

impl<S: FnMut(&[PathBuf]), E: FnMut(&Path)> crate::Harness for Faulty<S, E> {
    fn cold(&mut self) -> Result<String, String> {
        Err("no".into())
    }
    fn drop_caches(&mut self) -> Result<String, String> {
        Err("no".into())
    }
    fn evict(&mut self, path: &Path, _: u64, _: u64) -> Result<Option<f64>, String> {
        (self.on_evict)(path);
        self.evicted.push(path.to_path_buf());
        Ok(Some(0.0))
    }
    fn resident(&mut self, _: &Path, _: u64, _: u64) -> Result<f64, String> {
        Err("no".into())
    }
    fn phase_start(&mut self) -> bool {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        (self.at_start)(&files);
        true
    }
}

/// A harness that does nothing to the files, and counts the evictions.
fn faithful(dir: &Path) -> Faulty<impl FnMut(&[PathBuf]), impl FnMut(&Path)> {
    Faulty {
        dir: dir.to_path_buf(),
        at_start: |_: &[PathBuf]| {},
        on_evict: |_: &Path| {},
        evicted: Vec::new(),
    }
}

/// What a run with `harness` ended with and stored.
fn run_with(dir: &Path, settings: &IoSettings, harness: &mut dyn crate::Harness) -> (End, Collect) {
    let mut sink = Collect::default();
    let end = settings.run(
        &Context::default(),
        dir,
        &StopFlag::new(),
        &mut sink,
        harness,
    );
    (end, sink)
}

/// Block 3 of the file at `path`.
fn block_3(path: &Path) -> Vec<u8> {
    use std::os::unix::fs::FileExt;
    let mut block = vec![0u8; 4096];
    let file = std::fs::File::open(path).unwrap();
    file.read_exact_at(&mut block, 3 * 4096).unwrap();
    block
}

/// `block` over block 3 of the file at `path`.
fn put_block_3(path: &Path, block: &[u8]) {
    use std::os::unix::fs::FileExt;
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.write_all_at(block, 3 * 4096).unwrap();
}

/// `verify` finds no fault where there is none: either engine, every pattern, buffered and
/// direct, two threads, blocks of one and of two 4 KiB blocks (registered buffers too), a
/// written layout and a sparse one — and a time-bound run that wrote only some of the blocks
/// of a sparse file (the others holes, which are not checked) and of a written one (the others
/// the layout's). Each file is evicted and read back once after the phase; the results say it
/// was verified.
#[test]
fn verified_runs_read_back_as_written_with_either_engine_every_pattern_and_direct() {
    let mut cases = Vec::new();
    for engine in [Engine::Sync, Engine::IoUring] {
        for rw in [Rw::Read, Rw::Write, Rw::RandWrite, Rw::RandRw] {
            for direct in [false, true] {
                cases.push((engine, rw, direct, 4096, false, false));
            }
        }
        cases.push((engine, Rw::RandWrite, false, 8192, true, false));
        cases.push((engine, Rw::ReadWrite, true, 8192, false, false));
        // Paced to 2000 operations a second for 20 ms: about 40 of 256 blocks written.
        cases.push((engine, Rw::RandWrite, false, 4096, false, true));
        cases.push((engine, Rw::RandWrite, true, 4096, true, true));
    }
    for (engine, rw, direct, bs, overwrite, partial) in cases {
        let case = format!(
            "{engine} {rw} direct {direct} bs {bs} overwrite {overwrite} partial {partial}"
        );
        let dir = tempfile::tempdir().unwrap();
        let uring = engine == Engine::IoUring;
        let settings = IoSettings {
            rw,
            engine,
            direct,
            overwrite,
            iodepth: if uring { 8 } else { 1 },
            iodepth_batch_submit: if uring { 0 } else { 1 },
            fixedbufs: uring && bs == 8192,
            bs: Size(bs),
            size: Size(1 << 20),
            threads: 2,
            verify: true,
            rate_iops: if partial { 2000 } else { 0 },
            runtime: TimeSpan::from_ns(if partial { 20_000_000 } else { 0 }),
            time_based: partial,
            ..IoSettings::default()
        };
        let mut harness = faithful(dir.path());
        let (end, sink) = run_with(dir.path(), &settings, &mut harness);
        if direct && end.outcome == Outcome::Unsupported {
            continue; // a filesystem without O_DIRECT (tmpfs before 6.6): nothing to verify
        }
        assert_eq!(end.outcome, Outcome::Ok, "{case}: {:?}", end.error);
        assert_eq!(harness.evicted.len(), 2, "{case}: each file once");
        assert!(!sink.records.is_empty(), "{case}");
        for r in &sink.records {
            assert_eq!(r.attributes["verified"], true, "{case}");
        }
        if partial {
            let writes = value(&sink.records[0], "ops");
            assert!(
                writes > 0.0 && writes < 2.0 * 256.0,
                "{case}: {writes} blocks written"
            );
        }
        assert!(
            std::fs::read_dir(dir.path()).unwrap().next().is_none(),
            "{case}: files left"
        );
    }
    // Without verify, a result says nothing of it.
    let dir = tempfile::tempdir().unwrap();
    let plain = IoSettings {
        rw: Rw::RandWrite,
        size: Size(256 << 10),
        ..IoSettings::default()
    };
    let (end, sink) = run_in(dir.path(), &plain);
    assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
    assert!(!sink.records[0].attributes.contains_key("verified"));
}

/// A block read back other than written ends the run `corrupt`, naming the file, the block
/// and what was found; the file stays for inspection (the other thread's goes), and the
/// phase's results are not stored. The harness stands for a device that lost a write to a
/// sparse file (its eviction of thread 1's file zeroes block 3), or changed a byte of a
/// written one (it flips a byte of block 3's payload: the phase's block, or in a read-only
/// run the layout's). Either engine, buffered and direct.
#[test]
fn a_block_read_back_other_than_written_ends_the_run_corrupt() {
    for engine in [Engine::Sync, Engine::IoUring] {
        for (rw, direct, zero, found) in [
            (Rw::Write, false, true, "found no stamp (it begins 0000"),
            (Rw::RandWrite, true, true, "found no stamp (it begins 0000"),
            (Rw::RandRw, false, false, "found its payload changed"),
            (Rw::Read, true, false, "found its payload changed"),
        ] {
            let case = format!("{engine} {rw} direct {direct}");
            let dir = tempfile::tempdir().unwrap();
            let settings = IoSettings {
                rw,
                engine,
                direct,
                iodepth: if engine == Engine::IoUring { 4 } else { 1 },
                size: Size(256 << 10),
                threads: 2,
                seed: Some(5),
                verify: true,
                ..IoSettings::default()
            };
            let mut harness = Faulty {
                dir: dir.path().to_path_buf(),
                at_start: |_: &[PathBuf]| {},
                on_evict: |path: &Path| {
                    if path.to_string_lossy().ends_with("-1.dat") {
                        let mut block = block_3(path);
                        if zero {
                            block.fill(0);
                        } else {
                            block[1000] ^= 0xff;
                        }
                        put_block_3(path, &block);
                    }
                },
                evicted: Vec::new(),
            };
            let (end, sink) = run_with(dir.path(), &settings, &mut harness);
            if direct && end.outcome == Outcome::Unsupported {
                continue;
            }
            assert_eq!(end.outcome, Outcome::Corrupt, "{case}: {:?}", end.error);
            let said = end.error.unwrap().to_string();
            let bad = &harness.evicted[1];
            let begins = format!(
                "corrupt: {}: the block at byte 12288 is not what was written: expected a block of file 1 at byte 12288 (seed ",
                bad.display()
            );
            assert!(said.starts_with(&begins), "{case}: {said}");
            assert!(said.contains(found), "{case}: {said}");
            assert!(
                said.ends_with(&format!("; the file is kept (after {rw})")),
                "{case}: {said}"
            );
            assert!(sink.records.is_empty(), "{case}: {:?}", sink.records);
            let left: Vec<PathBuf> = std::fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .collect();
            assert_eq!(
                left,
                std::slice::from_ref(bad),
                "{case}: the evidence stays, alone"
            );
        }
    }
}

/// A write that did not reach the file leaves the block as it was before the phase: the
/// layout's — right offset, right run, intact, and older than the phase's write to it. The
/// harness keeps block 3 of the file as the phase's start finds it and puts it back at the
/// eviction (a device that lost the phase's writes there): a run that overwrites a written
/// file, sequentially or at random, through either engine, buffered and direct, ends
/// `corrupt`, naming the earlier write.
#[test]
fn a_write_that_did_not_reach_the_file_is_found() {
    for engine in [Engine::Sync, Engine::IoUring] {
        for (rw, direct) in [
            (Rw::Write, false),
            (Rw::RandWrite, true),
            (Rw::RandWrite, false),
            (Rw::Write, true),
        ] {
            let case = format!("{engine} {rw} direct {direct}");
            let dir = tempfile::tempdir().unwrap();
            let settings = IoSettings {
                rw,
                engine,
                direct,
                overwrite: true,
                iodepth: if engine == Engine::IoUring { 4 } else { 1 },
                size: Size(256 << 10),
                seed: Some(5),
                verify: true,
                ..IoSettings::default()
            };
            let kept = std::cell::RefCell::new(Vec::new());
            let mut harness = Faulty {
                dir: dir.path().to_path_buf(),
                at_start: |files: &[PathBuf]| *kept.borrow_mut() = block_3(&files[0]),
                on_evict: |path: &Path| put_block_3(path, &kept.borrow()),
                evicted: Vec::new(),
            };
            let (end, _) = run_with(dir.path(), &settings, &mut harness);
            if direct && end.outcome == Outcome::Unsupported {
                continue;
            }
            assert_eq!(end.outcome, Outcome::Corrupt, "{case}: {:?}", end.error);
            let said = end.error.unwrap().to_string();
            assert!(said.contains("the block at byte 12288"), "{case}: {said}");
            assert!(
                said.contains("the later write did not reach the file"),
                "{case}: {said}"
            );
        }
    }
}
