//! The recorder on the real kernel (as root): a program of this test's own (this binary,
//! re-executed with FSBENCH_RECORD_HELPER set) makes known calls from two threads and from a
//! forked child; the trace must hold exactly those calls, with their arguments, returns, pids,
//! tids and root-relative paths, and nothing from outside the root. A recording that loses calls
//! is refused; without root the error says so.

use std::collections::BTreeSet;
use std::ffi::{CString, OsString};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use fsbench_record::{record, Options, RecordError, Target};
use fsbench_trace::{Event, Op, Trace};

const HELPER: &str = "FSBENCH_RECORD_HELPER";
const ROOT: &str = "FSBENCH_RECORD_ROOT";

/// One recording at a time: each mounts tracefs for its attach when it is not mounted.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Records with `opts`, no other recording of this test binary running at the same time.
fn alone(opts: &Options) -> Result<fsbench_record::Recorded, RecordError> {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    record(opts)
}

fn is_root() -> bool {
    // SAFETY: no preconditions.
    let root = unsafe { libc::geteuid() == 0 };
    // CI is root: there a missing privilege is a failure, never a silent skip.
    assert!(
        root || std::env::var_os("CI").is_none(),
        "the recorder's tests need root, and CI must run them as root"
    );
    root
}

fn c(path: &str) -> CString {
    CString::new(path).unwrap()
}

/// Waits (up to 10 s) until the task at `proc_dir` (`/proc/PID` or `/proc/self/task/TID`) sleeps
/// in system call `nr`, as its `syscall` file shows: a helper that must be asleep before
/// another wakes it checks, rather than trusting a sleep on a busy host. Only open, read,
/// close and nanosleep outside the root (after a fork too); false if it never did.
fn wait_until_asleep_in(proc_dir: &str, nr: i64) -> bool {
    let path = c(&format!("{proc_dir}/syscall"));
    let mut buf = [0u8; 32];
    for _ in 0..10_000 {
        // SAFETY: a valid path and buffer; the descriptor closed once.
        let n = unsafe {
            let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return false;
            }
            let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
            libc::close(fd);
            n
        };
        let text = &buf[..n.max(0) as usize];
        let first = text
            .split(|&b| b == b' ' || b == b'\n')
            .next()
            .unwrap_or(&[]);
        if std::str::from_utf8(first)
            .ok()
            .and_then(|t| t.parse::<i64>().ok())
            == Some(nr)
        {
            return true;
        }
        let ms = libc::timespec {
            tv_sec: 0,
            tv_nsec: 1_000_000,
        };
        // SAFETY: a valid timespec.
        unsafe { libc::nanosleep(&ms, std::ptr::null_mut()) };
    }
    false
}

/// The helper's calls, per thread: `dir` absolute (thread a) or relative to the working
/// directory (thread b).
fn thread_calls(dir: &str) {
    let file = format!("{dir}/f");
    let renamed = format!("{dir}/g");
    unsafe {
        assert_eq!(libc::mkdir(c(dir).as_ptr(), 0o755), 0);
        let fd = libc::open(
            c(&file).as_ptr(),
            libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC,
            0o644,
        );
        assert!(fd >= 0);
        let buf = [7u8; 100];
        assert_eq!(libc::write(fd, buf.as_ptr().cast(), 100), 100);
        assert_eq!(libc::pwrite(fd, buf.as_ptr().cast(), 50, 1000), 50);
        assert_eq!(libc::fsync(fd), 0);
        // Ownership: the owner and group unchanged (-1), then the group it has (anyone may).
        assert_eq!(libc::fchown(fd, u32::MAX, u32::MAX), 0);
        assert_eq!(libc::chown(c(&file).as_ptr(), u32::MAX, libc::getegid()), 0);
        let mut back = [0u8; 20];
        assert_eq!(libc::pread(fd, back.as_mut_ptr().cast(), 10, 0), 10);
        assert_eq!(libc::lseek(fd, 0, libc::SEEK_SET), 0);
        assert_eq!(libc::read(fd, back.as_mut_ptr().cast(), 20), 20);
        assert_eq!(libc::close(fd), 0);
        let mut st: libc::stat = std::mem::zeroed();
        assert_eq!(libc::stat(c(&file).as_ptr(), &mut st), 0);
        assert_eq!(libc::rename(c(&file).as_ptr(), c(&renamed).as_ptr()), 0);
        assert_eq!(libc::unlink(c(&renamed).as_ptr()), 0);
        assert_eq!(libc::rmdir(c(dir).as_ptr()), 0);
    }
}

/// Runs as the recorded program when FSBENCH_RECORD_HELPER is set; a no-op test otherwise.
#[test]
fn helper() {
    let Some(mode) = std::env::var_os(HELPER) else {
        return;
    };
    let root = std::env::var(ROOT).unwrap();
    match mode.to_str().unwrap() {
        "threads" => {
            std::env::set_current_dir(&root).unwrap();
            let abs = format!("{root}/d_a");
            let a = std::thread::spawn(move || thread_calls(&abs));
            a.join().unwrap();
            let b = std::thread::spawn(|| thread_calls("d_b"));
            b.join().unwrap();
            // One call outside the root: counted, not recorded.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            unsafe { libc::stat(c("/proc/self").as_ptr(), &mut st) };
        }
        "fork" => unsafe {
            let fd = libc::open(
                c(&format!("{root}/parent.txt")).as_ptr(),
                libc::O_CREAT | libc::O_WRONLY,
                0o600,
            );
            assert!(fd >= 0);
            let (parent, parent_tid) = (libc::getpid(), libc::gettid());
            let pid = libc::fork();
            if pid == 0 {
                let ok = libc::write(fd, b"inherit".as_ptr().cast(), 7) == 7;
                let child = libc::open(
                    c(&format!("{root}/child.txt")).as_ptr(),
                    libc::O_CREAT | libc::O_WRONLY,
                    0o600,
                );
                libc::close(child);
                // The parent is asleep in waitpid (wait4) when this child ends: its exit wakes
                // it.
                let asleep = wait_until_asleep_in(&format!("/proc/{parent}/task/{parent_tid}"), 61);
                libc::_exit(if ok && child >= 0 && asleep { 0 } else { 1 });
            }
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            assert_eq!(status, 0);
            libc::close(fd);
        },
        "burst" => {
            // Long paths (about 1 KiB a record): four records fill the 4 KiB buffer, so no
            // reader keeps up with 20,000 of them however promptly it is woken.
            let long = vec!["x".repeat(200); 4].join("/");
            let path = c(&format!("{root}/{long}"));
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            for _ in 0..20_000 {
                unsafe { libc::stat(path.as_ptr(), &mut st) };
            }
        }
        "pid" => unsafe {
            // Opened before the recording begins: known from /proc/PID/fd.
            let fd = libc::open(
                c(&format!("{root}/pre.txt")).as_ptr(),
                libc::O_CREAT | libc::O_WRONLY,
                0o600,
            );
            assert!(fd >= 0);
            println!("\nFD={fd}");
            let stop = format!("{root}/stop");
            let tick = c(&format!("{root}/tick"));
            let mut st: libc::stat = std::mem::zeroed();
            while !Path::new(&stop).exists() {
                libc::pwrite(fd, b"t".as_ptr().cast(), 1, 0);
                libc::stat(tick.as_ptr(), &mut st);
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        },
        "long-path" | "too-long-path" => {
            // The longest path the recorder keeps whole (1023 bytes), or one byte more.
            let len = if mode == "long-path" { 1023 } else { 1024 };
            let mut path = format!("{root}/");
            while path.len() < len {
                let room = (len - path.len()).min(200);
                path.push_str(&"n".repeat(room));
                if path.len() < len {
                    path.push('/');
                }
            }
            assert_eq!(path.len(), len);
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            unsafe { libc::stat(c(&path).as_ptr(), &mut st) };
        }
        "mapped-path" => unsafe {
            // The path handed to open() lives in a file mapping this process has never touched:
            // its page is not in the page tables when the call enters (the kernel faults it in
            // during the call, the recorder at entry cannot).
            let name = format!("{root}/mapped.txt");
            let holder = format!("{root}/holder");
            let mut bytes = name.clone().into_bytes();
            bytes.resize(4096, 0);
            std::fs::write(&holder, &bytes).unwrap();
            let hfd = libc::open(c(&holder).as_ptr(), libc::O_RDONLY);
            assert!(hfd >= 0);
            let map = libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                hfd,
                0,
            );
            assert_ne!(map, libc::MAP_FAILED);
            // Dropped from the page cache too, so that no fault-around maps it early.
            libc::posix_fadvise(hfd, 0, 4096, libc::POSIX_FADV_DONTNEED);
            let fd = libc::open(
                map.cast(),
                libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                0o644,
            );
            assert!(fd >= 0);
            assert_eq!(libc::write(fd, b"mapped".as_ptr().cast(), 6), 6);
            libc::close(fd);
        },
        "faults" => unsafe {
            // A file inside the root read through a mapping, out of the page cache first: the
            // reads happen in page faults, between calls; then a sleep, which is not waiting
            // for I/O; then the same with a file outside the root (as a program's pages are).
            read_mapped_cold(&format!("{root}/mapped.dat"));
            let mut st: libc::stat = std::mem::zeroed();
            libc::stat(c(&format!("{root}/after-faults")).as_ptr(), &mut st);
            std::thread::sleep(std::time::Duration::from_millis(100));
            libc::stat(c(&format!("{root}/after-sleep")).as_ptr(), &mut st);
            read_mapped_cold(&format!("{root}/../outside.dat"));
            libc::stat(c(&format!("{root}/after-outside-faults")).as_ptr(), &mut st);
            // A fault that does not wait (a cached page of a root file), a call, then a wait
            // for I/O that no fault began: mlock reading a cold mapping in, inside a call the
            // recorder does not capture. The wait is not the fault's.
            let cached = format!("{root}/cached.dat");
            std::fs::write(&cached, vec![9u8; 4096]).unwrap();
            let fd = libc::open(c(&cached).as_ptr(), libc::O_RDONLY);
            assert!(fd >= 0);
            let page = libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd,
                0,
            );
            assert_ne!(page, libc::MAP_FAILED);
            let (cold, len) = map_cold(&format!("{root}/locked.dat"));
            assert_eq!(std::ptr::read_volatile(page.cast::<u8>()), 9);
            libc::stat(c(&format!("{root}/after-quick-fault")).as_ptr(), &mut st);
            assert_eq!(libc::mlock(cold, len), 0);
            libc::stat(c(&format!("{root}/after-mlock")).as_ptr(), &mut st);
        },
        "wake" => unsafe {
            // Thread b waits on a pipe that a relay thread fills from another pipe, which the
            // main thread writes after a call in the root; the relay makes no call in the root.
            let (mut one, mut two) = ([0i32; 2], [0i32; 2]);
            assert_eq!(libc::pipe(one.as_mut_ptr()), 0);
            assert_eq!(libc::pipe(two.as_mut_ptr()), 0);
            let (one_r, two_r, two_w) = (one[0], two[0], two[1]);
            // The threads' ids, spun for (waiting on a channel would make the main thread's
            // next call one that another thread woke).
            let tids: Arc<[std::sync::atomic::AtomicI32; 2]> = Arc::default();
            let relay_tid = tids.clone();
            let relay = std::thread::spawn(move || {
                relay_tid[0].store(libc::gettid(), std::sync::atomic::Ordering::SeqCst);
                let mut b = [0u8; 1];
                assert_eq!(libc::read(one_r, b.as_mut_ptr().cast(), 1), 1);
                assert_eq!(libc::write(two_w, b.as_ptr().cast(), 1), 1);
            });
            let after = format!("{root}/b-after");
            let b_tid = tids.clone();
            let b = std::thread::spawn(move || {
                b_tid[1].store(libc::gettid(), std::sync::atomic::Ordering::SeqCst);
                let mut byte = [0u8; 1];
                assert_eq!(libc::read(two_r, byte.as_mut_ptr().cast(), 1), 1);
                let mut st: libc::stat = std::mem::zeroed();
                libc::stat(c(&after).as_ptr(), &mut st);
            });
            // Both others asleep on their pipes (read) before the call that the wakeup must
            // come 100 ms after.
            for slot in tids.iter() {
                let tid = loop {
                    match slot.load(std::sync::atomic::Ordering::SeqCst) {
                        0 => std::thread::yield_now(),
                        tid => break tid,
                    }
                };
                assert!(
                    wait_until_asleep_in(&format!("/proc/self/task/{tid}"), 0),
                    "thread {tid} never slept in read"
                );
            }
            let mut st: libc::stat = std::mem::zeroed();
            libc::stat(c(&format!("{root}/a-before")).as_ptr(), &mut st);
            std::thread::sleep(std::time::Duration::from_millis(100));
            assert_eq!(libc::write(one[1], b"x".as_ptr().cast(), 1), 1);
            relay.join().unwrap();
            b.join().unwrap();
        },
        "timer" => unsafe {
            // Both threads on one CPU (this one: a cpuset may leave out CPU 0): when b's sleep
            // ends, its timer's interrupt finds the main thread running there, spinning (no
            // call) until b is done.
            let cpu = libc::sched_getcpu();
            assert!(cpu >= 0);
            let mut one: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu as usize, &mut one);
            assert_eq!(
                libc::sched_setaffinity(0, std::mem::size_of_val(&one), &one),
                0
            );
            let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let (before, after) = (format!("{root}/b-before"), format!("{root}/b-after"));
            let b = {
                let done = done.clone();
                std::thread::spawn(move || {
                    let mut st: libc::stat = std::mem::zeroed();
                    libc::stat(c(&before).as_ptr(), &mut st);
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    libc::stat(c(&after).as_ptr(), &mut st);
                    done.store(true, std::sync::atomic::Ordering::Release);
                })
            };
            let mut st: libc::stat = std::mem::zeroed();
            libc::stat(c(&format!("{root}/a-before")).as_ptr(), &mut st);
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                std::hint::spin_loop();
            }
            b.join().unwrap();
        },
        "sleep" => std::thread::sleep(std::time::Duration::from_secs(30)),
        "fionclex" => unsafe {
            // Opened close-on-exec (as Python opens everything), made inheritable with
            // ioctl(FIONCLEX) (as Python's os.set_inheritable and subprocess's pass_fds do),
            // then written to by the program exec'd.
            let fd = libc::open(
                c(&format!("{root}/kept.txt")).as_ptr(),
                libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                0o644,
            );
            assert!(fd >= 0);
            assert_eq!(libc::dup3(fd, 7, libc::O_CLOEXEC), 7);
            libc::close(fd);
            assert_eq!(libc::ioctl(7, libc::FIONCLEX), 0);
            let argv = [c("sh"), c("-c"), c("echo hi >&7")];
            let ptrs = [
                argv[0].as_ptr(),
                argv[1].as_ptr(),
                argv[2].as_ptr(),
                std::ptr::null(),
            ];
            libc::execvp(ptrs[0], ptrs.as_ptr());
            panic!("exec sh");
        },
        "daemon" => unsafe {
            // A child left running after the command ends, making a call later.
            if libc::fork() == 0 {
                std::thread::sleep(std::time::Duration::from_secs(2));
                let mut st: libc::stat = std::mem::zeroed();
                libc::stat(c(&format!("{root}/late")).as_ptr(), &mut st);
                libc::_exit(0);
            }
        },
        "not-root" => {
            let out = Path::new(&root).join("t.trace");
            let e = record(&options(Path::new(&root), "threads", &out)).unwrap_err();
            println!("ERROR: {e}");
        }
        other => panic!("unknown helper mode {other}"),
    }
    std::process::exit(0);
}

fn helper_command(mode: &str, root: &Path) -> Vec<OsString> {
    // The helper learns its mode and root from the environment it inherits: set in the
    // command through env(1).
    vec![
        "env".into(),
        format!("{HELPER}={mode}").into(),
        format!("{ROOT}={}", root.display()).into(),
        std::env::current_exe().unwrap().into(),
        "helper".into(),
        "--exact".into(),
        "--nocapture".into(),
        "--test-threads=1".into(),
    ]
}

fn options(root: &Path, mode: &str, output: &Path) -> Options {
    Options {
        root: root.to_path_buf(),
        target: Target::Command(helper_command(mode, root)),
        anonymise: false,
        buffer: fsbench_record::DEFAULT_BUFFER,
        output: output.to_path_buf(),
        stop: Arc::new(AtomicBool::new(false)),
        classic_sched: false,
    }
}

fn recorded(mode: &str, anonymise: bool) -> (tempfile::TempDir, Trace) {
    recorded_with(mode, anonymise, false)
}

/// As [`recorded`], with the classic sched tracepoints attached if `classic_sched`; the trace's
/// header says which were (raw ones wherever the kernel has BTF, as this host does).
fn recorded_with(mode: &str, anonymise: bool, classic_sched: bool) -> (tempfile::TempDir, Trace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("existing"), b"12345").unwrap();
    let out = dir.path().join("app.trace");
    let mut opts = options(&root, mode, &out);
    opts.anonymise = anonymise;
    opts.classic_sched = classic_sched;
    let done = alone(&opts).unwrap();
    assert_eq!(done.exit_code, Some(0), "the helper failed");
    let trace = Trace::read(&out).unwrap();
    // Raw hooks wherever the kernel has BTF and sched_switch's raw tracepoint has the previous
    // task's state (Linux 5.18).
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let mut version = release
        .trim()
        .split(['.', '-'])
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let at_least_5_18 = (version.next().unwrap_or(0), version.next().unwrap_or(0)) >= (5, 18);
    let btf = Path::new("/sys/kernel/btf/vmlinux").exists() && at_least_5_18;
    // Asked for: plain classic; refused by the kernel: classic with the reason after a colon.
    let how = if classic_sched {
        "(classic;"
    } else if !btf {
        "(classic"
    } else {
        "(raw;"
    };
    assert!(
        trace.header.mechanism.contains(how),
        "{how} expected: {}",
        trace.header.mechanism
    );
    (dir, trace)
}

/// The sched tracepoints both ways: raw where the kernel allows, and the classic ones that
/// older kernels get.
const SCHED_WAYS: [bool; 2] = [false, true];

/// The events of one thread, from its first call naming `dir` on.
fn thread_of<'t>(trace: &'t Trace, dir: &str) -> Vec<&'t Event> {
    let tid = trace
        .events
        .iter()
        .find(|e| e.op.paths().first() == Some(&dir))
        .unwrap_or_else(|| panic!("no call on {dir}: {:#?}", trace.events))
        .tid;
    trace.events.iter().filter(|e| e.tid == tid).collect()
}

#[test]
fn two_threads_calls_are_recorded_exactly() {
    if !is_root() {
        eprintln!("skipped: recording needs root");
        return;
    }
    let (_dir, trace) = recorded("threads", false);
    assert!(trace.tree.iter().any(|n| n.path == "existing"));
    let pid = trace
        .events
        .iter()
        .find(|e| e.op == Op::Exec)
        .expect("the command's exec")
        .pid;
    let mut tids = BTreeSet::new();
    for dir in ["d_a", "d_b"] {
        let events = thread_of(&trace, dir);
        let fd = events[1].ret as i32;
        assert!(fd >= 3, "{:?}", events[1]);
        let file = format!("{dir}/f");
        let expected = vec![
            (
                Op::Mkdir {
                    path: dir.into(),
                    mode: 0o755,
                },
                0,
            ),
            (
                Op::Open {
                    path: file.clone(),
                    flags: libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC,
                    mode: 0o644,
                },
                fd as i64,
            ),
            (Op::Write { fd, len: 100 }, 100),
            (
                Op::Pwrite {
                    fd,
                    len: 50,
                    off: 1000,
                },
                50,
            ),
            (Op::Fsync { fd }, 0),
            (
                Op::Fchown {
                    fd,
                    uid: u32::MAX,
                    gid: u32::MAX,
                },
                0,
            ),
            (
                Op::Chown {
                    path: file.clone(),
                    uid: u32::MAX,
                    // SAFETY: getegid has no preconditions.
                    gid: unsafe { libc::getegid() },
                    follow: true,
                },
                0,
            ),
            (
                Op::Pread {
                    fd,
                    len: 10,
                    off: 0,
                },
                10,
            ),
            (
                Op::Lseek {
                    fd,
                    off: 0,
                    whence: 0,
                },
                0,
            ),
            (Op::Read { fd, len: 20 }, 20),
            (Op::Close { fd }, 0),
            (
                Op::Stat {
                    path: file.clone(),
                    follow: true,
                },
                0,
            ),
            (
                Op::Rename {
                    from: file.clone(),
                    to: format!("{dir}/g"),
                    flags: 0,
                },
                0,
            ),
            (
                Op::Unlink {
                    path: format!("{dir}/g"),
                },
                0,
            ),
            (Op::Rmdir { path: dir.into() }, 0),
        ];
        let got: Vec<(Op, i64)> = events.iter().map(|e| (e.op.clone(), e.ret)).collect();
        assert_eq!(got, expected, "thread on {dir}");
        for e in &events {
            assert_eq!(e.pid, pid);
            assert_ne!(e.tid, pid, "a spawned thread's calls carry its own tid");
        }
        assert!(events
            .windows(2)
            .all(|w| w[0].start_ns + w[0].dur_ns <= w[1].start_ns));
        // The recorder's own time between two calls (the first's exit probe after its
        // timestamp, the second's entry probe before its own) is measured, as part of the gap
        // and never more: the replay leaves it out of the think time.
        for w in events.windows(2) {
            let gap = w[1].start_ns - (w[0].start_ns + w[0].dur_ns);
            assert!(
                w[1].recorder_ns > 0 && w[1].recorder_ns <= gap,
                "{:?} then {:?}",
                w[0],
                w[1]
            );
        }
        tids.insert(events[0].tid);
    }
    assert_eq!(tids.len(), 2, "two threads");
    // Nothing else of the helper's touched the root (the test harness works outside it).
    let known: usize = ["d_a", "d_b"]
        .iter()
        .map(|d| thread_of(&trace, d).len())
        .sum();
    let exec = trace.events.iter().filter(|e| e.op == Op::Exec).count();
    assert_eq!(trace.events.len(), known + exec, "{:#?}", trace.events);
    assert!(trace.end.outside_events >= 1, "the stat of /proc/self");
    for e in &trace.events {
        for p in e.op.paths() {
            fsbench_trace::path::check(p).unwrap();
        }
    }
}

#[test]
fn a_forked_child_is_recorded_with_its_inherited_descriptors() {
    if !is_root() {
        eprintln!("skipped: recording needs root");
        return;
    }
    let (_dir, trace) = recorded("fork", false);
    let open = trace
        .events
        .iter()
        .find(|e| matches!(&e.op, Op::Open { path, .. } if path == "parent.txt"))
        .expect("the parent's open");
    let fd = open.ret as i32;
    let parent = open.pid;
    let fork = trace
        .events
        .iter()
        .find(|e| matches!(e.op, Op::Fork { .. }) && e.pid == parent)
        .expect("the fork");
    let Op::Fork { child } = fork.op else {
        unreachable!()
    };
    assert_eq!(fork.ret, child as i64);
    assert_ne!(child, parent);
    let write = trace
        .events
        .iter()
        .find(|e| e.pid == child && matches!(e.op, Op::Write { .. }))
        .expect("the child's write on the inherited descriptor");
    assert_eq!((write.op.clone(), write.ret), (Op::Write { fd, len: 7 }, 7));
    assert_eq!(write.tid, child);
    assert!(write.start_ns > fork.start_ns);
    assert!(trace
        .events
        .iter()
        .any(|e| e.pid == child && matches!(&e.op, Op::Open { path, .. } if path == "child.txt")));
    let close = trace
        .events
        .iter()
        .find(|e| e.pid == parent && e.op == Op::Close { fd })
        .expect("the parent's close");
    // The parent waited for the child: the child's exit woke it (after the child had left
    // the traced processes), and the call after the wait says so.
    let woken = close
        .woken
        .expect("the parent was woken by its child's exit");
    assert_eq!(woken.tid, child, "{close:?}");
}

#[test]
fn an_anonymised_recording_has_no_original_names() {
    if !is_root() {
        eprintln!("skipped: recording needs root");
        return;
    }
    let (dir, trace) = recorded("fork", true);
    assert!(trace.header.anonymised);
    let text = format!("{trace:?}");
    for name in ["parent.txt", "child.txt", "existing", HELPER, "root/"] {
        assert!(!text.contains(name), "{name} in the anonymised trace");
    }
    assert!(!text.contains(&dir.path().display().to_string()));
    // The structure is kept: the parent's open and the child's write on it.
    assert!(trace.events.iter().any(|e| matches!(e.op, Op::Open { .. })));
    assert!(trace
        .events
        .iter()
        .any(|e| matches!(e.op, Op::Write { len: 7, .. })));
}

#[test]
fn a_running_process_is_recorded_with_the_descriptors_it_had() {
    if !is_root() {
        eprintln!("skipped: recording needs root");
        return;
    }
    // The other recordings first: the helper's 3 s start only once this one may attach.
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["helper", "--exact", "--nocapture", "--test-threads=1"])
        .env(HELPER, "pid")
        .env(ROOT, dir.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = tempfile::tempdir().unwrap();
    let trace_path = out.path().join("pid.trace");
    let mut opts = options(dir.path(), "pid", &trace_path);
    opts.target = Target::Pid(pid);
    // The helper calls until `stop` appears: well after the recorder has attached.
    let stop = dir.path().join("stop");
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(3));
        std::fs::write(stop, b"").unwrap();
    });
    let done = record(&opts).unwrap();
    stopper.join().unwrap();
    assert_eq!(done.exit_code, None);
    let output = child.wait_with_output().unwrap();
    let fd: i32 = String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.trim().strip_prefix("FD=")?.parse().ok())
        .expect("the helper prints its descriptor");
    let trace = Trace::read(&trace_path).unwrap();
    assert_eq!(
        trace.header.command.first().map(String::as_str),
        Some(std::env::current_exe().unwrap().to_str().unwrap())
    );
    let writes = trace
        .events
        .iter()
        .filter(|e| e.pid == pid && e.op == Op::Pwrite { fd, len: 1, off: 0 })
        .count();
    let ticks = trace
        .events
        .iter()
        .filter(|e| e.pid == pid && matches!(&e.op, Op::Stat { path, .. } if path == "tick"))
        .count();
    assert!(
        writes >= 10,
        "{writes} writes on the descriptor opened before: {:#?}",
        trace.events
    );
    assert!(ticks >= 10, "{ticks} stats of tick");
    assert!(trace.events.iter().all(|e| e.pid == pid));
}

#[test]
fn a_path_longer_than_the_recorder_keeps_is_refused_never_cut() {
    if !is_root() {
        eprintln!("skipped: recording needs root");
        return;
    }
    let (dir, trace) = recorded("long-path", false);
    let root = dir.path().join("root").canonicalize().unwrap();
    let stat = trace
        .events
        .iter()
        .find_map(|e| match &e.op {
            Op::Stat { path, .. } if path.starts_with("nnn") => Some(path.clone()),
            _ => None,
        })
        .expect("the stat of the 1023-byte path");
    assert_eq!(root.to_str().unwrap().len() + 1 + stat.len(), 1023);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("long.trace");
    let result = alone(&options(dir.path(), "too-long-path", &out));
    match result {
        Err(e @ RecordError::Truncated { count: 1, .. }) => {
            assert!(e.to_string().contains("longer than"), "{e}")
        }
        other => panic!("a 1024-byte path: {other:?}"),
    }
    assert!(!out.exists());
}

#[test]
fn a_recording_that_lost_calls_is_refused() {
    if !is_root() {
        eprintln!("skipped: recording needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("burst.trace");
    let mut opts = options(dir.path(), "burst", &out);
    opts.buffer = 4096;
    let result = alone(&opts);
    match result {
        Err(e @ RecordError::Lost { .. }) => {
            assert_eq!(e.exit_code(), Some(0));
            let text = e.to_string();
            assert!(text.contains("--buffer"), "{text}");
        }
        other => panic!("a 4 KiB buffer and 20,000 calls: {other:?}"),
    }
    assert!(!out.exists(), "a refused trace is not written");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nor its temporary"
    );
}

#[test]
fn without_root_the_error_says_so() {
    if !is_root() {
        let dir = tempfile::tempdir().unwrap();
        let e = record(&options(dir.path(), "threads", &dir.path().join("t"))).unwrap_err();
        assert!(
            matches!(e, RecordError::NeedsRoot | RecordError::NotBuilt),
            "{e}"
        );
        return;
    }
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["helper", "--exact", "--nocapture", "--test-threads=1"])
        .env(HELPER, "not-root")
        .env(ROOT, dir.path())
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("ERROR: recording needs root"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_recorder_is_built_under_ci() {
    if std::env::var_os("CI").is_some() {
        assert!(
            fsbench_record::available(),
            "CI builds the recorder (clang is installed)"
        );
    }
}

#[test]
fn a_path_the_recorder_could_not_read_is_never_left_out_silently() {
    if !is_root() {
        eprintln!("skipped: recording needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let out = dir.path().join("mapped.trace");
    let result = alone(&options(&root, "mapped-path", &out));
    match result {
        // The path is read again when the call returns: the call is in the trace, with its
        // write (before, it was counted as outside the root).
        Ok(done) => {
            assert_eq!(done.exit_code, Some(0), "the helper failed");
            let trace = Trace::read(&out).unwrap();
            let ops: Vec<&Op> = trace.events.iter().map(|e| &e.op).collect();
            assert!(
                ops.iter()
                    .any(|op| matches!(op, Op::Open { path, .. } if path == "mapped.txt")),
                "the open of mapped.txt is missing (outside: {}): {ops:#?}",
                trace.end.outside_events
            );
            assert!(
                ops.iter().any(|op| matches!(op, Op::Write { len: 6, .. })),
                "the write to mapped.txt is missing: {ops:#?}"
            );
        }
        Err(other) => panic!("{other}"),
    }
}

#[test]
fn an_output_that_cannot_be_written_is_refused_before_the_command_runs() {
    if !is_root() {
        eprintln!("skipped: recording needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let is_dir = dir.path().join("is-a-dir");
    std::fs::create_dir(&is_dir).unwrap();
    for out in [dir.path().join("missing/app.trace"), is_dir.clone()] {
        let result = alone(&options(&root, "fork", &out));
        match result {
            Err(e @ RecordError::Output { .. }) => {
                assert!(e.to_string().contains("-o"), "{e}")
            }
            other => panic!("{}: {other:?}", out.display()),
        }
        // The command never ran: it would have left parent.txt and child.txt.
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    }
    assert_eq!(std::fs::read_dir(&is_dir).unwrap().count(), 0);
}

#[test]
fn a_stop_request_ends_a_command_that_does_not_end_by_itself() {
    if !is_root() {
        eprintln!("skipped: recording needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("stopped.trace");
    let opts = options(dir.path(), "sleep", &out);
    // What SIGTERM (or SIGINT) to fsbench alone does: the CLI's handler sets `stop`.
    let stop = opts.stop.clone();
    let setter = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(500));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let began = std::time::Instant::now();
    let result = alone(&opts);
    setter.join().unwrap();
    let done = result.unwrap();
    assert!(
        began.elapsed() < std::time::Duration::from_secs(15),
        "the command ran to its end: {:?}",
        began.elapsed()
    );
    assert_eq!(done.exit_code, Some(128 + libc::SIGTERM));
    Trace::read(&out).unwrap();
}

/// The recording's span (what `record-cost.sh` compares with the command alone) ends when the
/// command does, not at the reader's next poll (100 ms apart): a command that ends at once
/// spans a few milliseconds.
#[test]
fn a_recording_ends_when_its_command_does_not_at_the_next_poll() {
    if !is_root() {
        eprintln!("skipped: recording needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("true.trace");
    let mut opts = options(dir.path(), "threads", &out);
    opts.target = Target::Command(vec!["true".into()]);
    let mut spans = Vec::new();
    for _ in 0..3 {
        let done = alone(&opts).unwrap();
        assert_eq!(done.exit_code, Some(0));
        spans.push(Trace::read(&out).unwrap().end.duration_ns);
    }
    // The fastest of three: a busy CI host may delay one.
    let fastest = *spans.iter().min().unwrap();
    assert!(
        fastest < 50_000_000,
        "`true` spans {spans:?} ns under the recorder"
    );
}

#[test]
fn a_command_that_cannot_be_executed_is_an_error_not_an_empty_trace() {
    if !is_root() {
        eprintln!("skipped: recording needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("none.trace");
    let mut opts = options(dir.path(), "threads", &out);
    opts.target = Target::Command(vec!["/nonexistent/fsbench-no-such-command".into()]);
    let result = alone(&opts);
    match result {
        Err(e @ RecordError::Start { .. }) => {
            assert!(e.to_string().contains("No such file"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    assert!(!out.exists());
}

#[test]
fn a_descriptor_made_inheritable_by_ioctl_is_followed_across_exec() {
    if !is_root() {
        eprintln!("skipped: recording needs root");
        return;
    }
    let (_dir, trace) = recorded("fionclex", false);
    let after_exec: Vec<&Op> = trace
        .events
        .iter()
        .skip_while(|e| !matches!(e.op, Op::Dup { new_fd: 7, .. }))
        .skip_while(|e| e.op != Op::Exec)
        .map(|e| &e.op)
        .collect();
    assert!(
        after_exec
            .iter()
            .any(|op| matches!(op, Op::Write { len: 3, .. })),
        "sh's write to kept.txt, through descriptor 7 kept by FIONCLEX, is missing (outside: {}): {:#?}",
        trace.end.outside_events,
        trace.events
    );
}

#[test]
fn two_recordings_at_once_do_not_pull_tracefs_from_under_each_other() {
    if !is_root() {
        eprintln!("skipped: recording needs root");
        return;
    }
    // Only where tracefs is not mounted: each recording mounts it for its attach, and
    // unmounts it after. Held against the other tests of this binary, not against each other.
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if Path::new("/sys/kernel/tracing/events").is_dir() {
        eprintln!("skipped: tracefs is mounted here, the recordings share it");
        return;
    }
    for round in 0..4 {
        let results: Vec<_> = (0..2)
            .map(|i| {
                std::thread::spawn(move || {
                    let dir = tempfile::tempdir().unwrap();
                    let out = dir.path().join(format!("{i}.trace"));
                    record(&options(dir.path(), "burst", &out)).map(|r| r.exit_code)
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().unwrap())
            .collect();
        for r in results {
            assert!(
                matches!(r, Ok(Some(0))),
                "round {round}: {:?}",
                r.map_err(|e| e.to_string())
            );
        }
    }
    assert!(
        !Path::new("/sys/kernel/tracing/events").is_dir(),
        "tracefs left mounted"
    );
}

#[test]
fn descendants_left_running_are_named_never_silently_dropped() {
    if !is_root() {
        eprintln!("skipped: recording needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("daemon.trace");
    let done = alone(&options(dir.path(), "daemon", &out)).unwrap();
    assert_eq!(done.exit_code, Some(0));
    assert_eq!(done.still_running.len(), 1, "{:?}", done.still_running);
    let trace = Trace::read(&out).unwrap();
    let fork = trace
        .events
        .iter()
        .find_map(|e| match e.op {
            Op::Fork { child } => Some(child),
            _ => None,
        })
        .expect("the fork");
    assert_eq!(done.still_running, [fork]);
}

/// Writes a 16 MiB file at `path`, drops it from the page cache, and reads it through a
/// mapping: every 64th page, backwards (against readahead), each in a fault that waits for the
/// disk. The file stays open and mapped: the caller's next call is the first after the faults.
///
/// # Safety
/// Maps and reads a file this process has just written.
unsafe fn read_mapped_cold(path: &str) {
    let (map, len) = map_cold(path);
    let mut sum = 0u64;
    for page in (0..len / 4096).rev().step_by(64) {
        sum += u64::from(std::ptr::read_volatile(map.cast::<u8>().add(page * 4096)));
    }
    assert!(sum > 0);
}

/// Writes a 16 MiB file at `path`, drops it from the page cache and maps it (left open).
///
/// # Safety
/// Maps a file this process has just written.
unsafe fn map_cold(path: &str) -> (*mut libc::c_void, usize) {
    std::fs::write(path, vec![7u8; 16 << 20]).unwrap();
    let fd = libc::open(c(path).as_ptr(), libc::O_RDONLY);
    assert!(fd >= 0);
    assert_eq!(libc::fdatasync(fd), 0);
    libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED);
    let len = 16 << 20;
    let map = libc::mmap(
        std::ptr::null_mut(),
        len,
        libc::PROT_READ,
        libc::MAP_SHARED,
        fd,
        0,
    );
    assert_ne!(map, libc::MAP_FAILED);
    (map, len)
}

/// The trace's stat of `name` (root-relative).
fn stat_of<'t>(trace: &'t Trace, name: &str) -> &'t Event {
    trace
        .events
        .iter()
        .find(|e| matches!(&e.op, Op::Stat { path, .. } if path == name))
        .unwrap_or_else(|| panic!("no stat of {name}: {:?}", trace.events))
}

/// The time a thread waits for I/O between its calls in the page faults of a file it mapped
/// from inside the root (read out of the cache) is recorded on the call that follows; a sleep
/// is not, nor are the faults of a file outside the root: the replay takes the first out of
/// the think time and reads those pages itself, and cannot take the others.
#[test]
fn the_time_blocked_in_page_faults_inside_the_root_is_recorded_and_a_sleep_or_outside_is_not() {
    if !is_root() {
        return;
    }
    for classic in SCHED_WAYS {
        blocked_in_faults(classic);
    }
}

fn blocked_in_faults(classic: bool) {
    let (_dir, trace) = recorded_with("faults", false, classic);
    assert!(
        trace.header.mechanism.contains("sched_switch"),
        "{}",
        trace.header.mechanism
    );
    let faults = stat_of(&trace, "after-faults");
    let sleep = stat_of(&trace, "after-sleep");
    assert!(
        faults.blocked_ns > 0,
        "64 pages read in faults from the disk: {faults:?}"
    );
    assert!(
        sleep.blocked_ns < 50_000_000,
        "the 100 ms sleep is not I/O: {sleep:?}"
    );
    let outside = stat_of(&trace, "after-outside-faults");
    assert_eq!(
        outside.blocked_ns, 0,
        "64 pages of a file outside the root: {outside:?}"
    );
    let mlock = stat_of(&trace, "after-mlock");
    assert_eq!(
        mlock.blocked_ns, 0,
        "mlock's reads after a fault and a call are not the fault's: {mlock:?}"
    );
    // It is part of the gap before the call, never more than it.
    let i = trace
        .events
        .iter()
        .position(|e| std::ptr::eq(e, faults))
        .unwrap();
    let before = trace.events[..i]
        .iter()
        .rev()
        .find(|e| e.tid == faults.tid)
        .unwrap();
    assert!(faults.blocked_ns <= faults.start_ns - (before.start_ns + before.dur_ns) + 1_000);
}

/// Which thread ended another's wait is recorded with the woken thread's next call, followed
/// past a thread that only passed the data on: the replay's recorded timing waits for the
/// thread whose calls the trace has.
#[test]
fn the_thread_that_ended_a_wait_is_recorded_past_a_relay() {
    if !is_root() {
        return;
    }
    for classic in SCHED_WAYS {
        woken_past_a_relay(classic);
    }
}

fn woken_past_a_relay(classic: bool) {
    let (_dir, trace) = recorded_with("wake", false, classic);
    assert!(
        trace.header.mechanism.contains("sched_waking"),
        "{}",
        trace.header.mechanism
    );
    let a = stat_of(&trace, "a-before");
    let b = stat_of(&trace, "b-after");
    assert_ne!(a.tid, b.tid);
    let woken = b.woken.expect("thread b was woken");
    assert_eq!(woken.tid, a.tid, "the main thread, past the relay: {b:?}");
    assert!(
        woken.at_ns > a.start_ns + 50_000_000 && woken.at_ns <= b.start_ns,
        "after the main thread's 100 ms sleep, before b's call: {a:?} {b:?}"
    );
    assert_eq!(a.woken, None);
}

/// A sleep that a timer ends is no other thread's doing: the timer's interrupt runs in whatever
/// thread is on the CPU (here the process's other thread, spinning there), which did not wake
/// the sleeper. Wakeups in interrupt context (hard or soft, a timer's callback) are not
/// recorded.
#[test]
fn a_sleep_a_timer_ended_names_no_waker() {
    if !is_root() {
        return;
    }
    for classic in SCHED_WAYS {
        let (_dir, trace) = recorded_with("timer", false, classic);
        let a = stat_of(&trace, "a-before");
        let b = stat_of(&trace, "b-after");
        assert_ne!(a.tid, b.tid);
        assert_eq!(
            b.woken, None,
            "the timer's interrupt ran in {} (classic: {classic}): {b:?}",
            a.tid
        );
    }
}
