//! Compiles the recorder's BPF program (bpf/record.bpf.c) with clang into OUT_DIR. Without
//! clang the build still succeeds: the cfg `fsbench_recorder` is left unset and
//! `fsbench record` says how to get a recorder (install clang, rebuild). Under CI (the
//! environment variable CI set) a missing or failing clang is an error.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(fsbench_recorder)");
    println!("cargo::rerun-if-changed=bpf/record.bpf.c");
    println!("cargo::rerun-if-env-changed=CLANG");
    println!("cargo::rerun-if-env-changed=CI");
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
    let found = which(&clang);
    match &found {
        // A clang installed later reruns this script: a missing path is always stale.
        None => println!("cargo::rerun-if-changed=/usr/bin/clang"),
        Some(path) => println!("cargo::rerun-if-changed={}", path.display()),
    }
    let out =
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("record.bpf.o");
    let result = match found {
        None => Err(format!("{clang} was not found")),
        Some(path) => Command::new(path)
            .args([
                "-O2",
                "-g",
                "-target",
                "bpf",
                "-Wall",
                "-Werror",
                "-c",
                "bpf/record.bpf.c",
                "-o",
            ])
            .arg(&out)
            .output()
            .map_err(|e| format!("{clang} could not run: {e}"))
            .and_then(|o| {
                if o.status.success() {
                    Ok(())
                } else {
                    Err(format!(
                        "{clang} failed: {}",
                        String::from_utf8_lossy(&o.stderr)
                    ))
                }
            }),
    };
    match result {
        Ok(()) => println!("cargo::rustc-cfg=fsbench_recorder"),
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!("the recorder's BPF program cannot be built under CI: {e}; install clang (scripts/install-deps.sh)")
        }
        Err(e) => println!(
            "cargo::warning=fsbench is built without its recorder ({e}): install clang (scripts/install-deps.sh) and rebuild"
        ),
    }
}

/// The program's path: as given when it names a file, else the first match on PATH.
fn which(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let path = PathBuf::from(program);
        return path.is_file().then_some(path);
    }
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}
