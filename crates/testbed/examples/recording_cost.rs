//! What the recording device costs the filesystem on it (issue 40's benchmark): the same
//! writes timed on a filesystem fsbench makes on the plain loop device and on the recording
//! device (recording, as a power cut's sequence runs), alternating which goes first, each pair
//! on fresh targets of the same image size. Run by `bench/recording-cost.sh` (root).
//!
//! Usage: `recording_cost FS PAIRS FILES STREAM_MIB WORK_DIR`; prints one TSV line a target:
//! pair, device, small files per second (each 4 KiB written, fsync'd and closed), and the
//! stream's MiB/s (STREAM_MIB written in 1 MiB records, then fsync'd).

use fsbench_testbed::{DeviceSpec, RealSystem, Target, TargetSpec};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// Incompressible bytes (xorshift64*), as fsbench's workloads write.
fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out.extend_from_slice(&x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// One target's timings: small files per second, stream MiB/s.
fn measure(fs: &str, recorded: bool, files: usize, stream_mib: usize, work: &Path) -> (f64, f64) {
    let spec = TargetSpec::builder(fs, work)
        .device(DeviceSpec::Image {
            size_bytes: Some(1 << 30),
        })
        .recording(recorded)
        .build()
        .expect("a target spec");
    let mut target = Target::prepare(&RealSystem, spec, &|| false).expect("the target");
    if recorded {
        target.record().expect("the recording");
    }
    let dir = target.info().mountpoint.join("bench");
    std::fs::create_dir(&dir).unwrap();
    let small = random_bytes(4096, 1);
    let started = Instant::now();
    for i in 0..files {
        let mut f = std::fs::File::create(dir.join(format!("f{i}"))).unwrap();
        f.write_all(&small).unwrap();
        f.sync_all().unwrap();
    }
    let files_per_s = files as f64 / started.elapsed().as_secs_f64();
    let record = random_bytes(1 << 20, 2);
    let started = Instant::now();
    let mut f = std::fs::File::create(dir.join("stream")).unwrap();
    for _ in 0..stream_mib {
        f.write_all(&record).unwrap();
    }
    f.sync_all().unwrap();
    let mib_s = stream_mib as f64 / started.elapsed().as_secs_f64();
    drop(f);
    if recorded {
        // As a durability run ends its recording: nothing listed, the files removed.
        let _ = target.power_cut(fsbench_testbed::recorder::states::Budget::default());
        target.resume().expect("resume");
    }
    let info = target.finish();
    assert!(
        info.teardown.iter().all(|n| !n.starts_with("error")),
        "{:?}",
        info.teardown
    );
    (files_per_s, mib_s)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 6 {
        eprintln!("usage: recording_cost FS PAIRS FILES STREAM_MIB WORK_DIR");
        std::process::exit(2);
    }
    let fs = &args[1];
    let pairs: usize = args[2].parse().expect("PAIRS");
    let files: usize = args[3].parse().expect("FILES");
    let stream: usize = args[4].parse().expect("STREAM_MIB");
    let work = Path::new(&args[5]);
    println!("pair\tdevice\tsmall_files_per_s\tstream_mib_s");
    for pair in 0..pairs {
        let order = if pair % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for recorded in order {
            let (files_per_s, mib_s) = measure(fs, recorded, files, stream, work);
            let device = if recorded { "recorded" } else { "plain" };
            println!("{pair}\t{device}\t{files_per_s:.1}\t{mib_s:.1}");
        }
    }
}
