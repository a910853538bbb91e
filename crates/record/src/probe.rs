//! The kernel half, loaded and attached: the BPF object built by build.rs, configured (which
//! calls to capture, where the sched tracepoints keep their fields on this kernel, the ring
//! buffer's size), attached to its tracepoints (the system calls' as raw tracepoints), then
//! read until the recording ends.
//! Detached when dropped.

use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;

use aya::maps::{Array, HashMap as BpfHashMap, MapData, RingBuf};
use aya::programs::{RawTracePoint, TracePoint};
use aya::{Btf, Ebpf, EbpfLoader};

use crate::raw::Calls;
use crate::syscalls::SYSCALLS;
use crate::RecordError;

/// The object, aligned as the ELF parser needs (a bare `include_bytes!` is aligned to 1).
#[repr(C, align(32))]
struct Aligned<B: ?Sized> {
    bytes: B,
}

static OBJECT: &Aligned<[u8]> = &Aligned {
    bytes: *include_bytes!(concat!(env!("OUT_DIR"), "/record.bpf.o")),
};

const TRACEFS: &str = "/sys/kernel/tracing";

/// The loaded program with its maps.
pub struct Probe {
    ebpf: Ebpf,
    ring: RingBuf<MapData>,
    traced: BpfHashMap<MapData, u32, u8>,
    /// The first record that could not be parsed (a program and parser out of step).
    pub bad_record: Option<String>,
    /// The time each thread spent waiting for I/O in page faults outside its calls is
    /// recorded: this kernel's sched_switch and page_fault_user keep their fields where the
    /// program reads them.
    pub blocked_time: bool,
    /// Which traced thread woke another is recorded: this kernel's sched_waking keeps the
    /// woken thread where the program reads it.
    pub wakeups: bool,
    /// Which of sched_switch, sched_waking and page_fault_user ([`HOOKS`]) are attached as
    /// raw tracepoints (the others as classic ones).
    pub raw_hooks: [bool; 3],
    /// Why the classic hooks were attached where raw ones were not asked away: no BTF, a
    /// relocation error, a program the kernel refused (the first reason).
    pub raw_refused: Option<String>,
}

/// The hooks on every context switch, wakeup and user page fault of the whole system, in the
/// order of [`Probe::raw_hooks`]: (category, name).
pub const HOOKS: [(&str, &str); 3] = [
    ("sched", "sched_switch"),
    ("sched", "sched_waking"),
    ("exceptions", "page_fault_user"),
];

/// Counters kept by the program (`COUNT_*` in bpf/record.bpf.c).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub lost: u64,
    pub table_full: u64,
    pub truncated: u64,
}

fn kernel(what: &str, e: impl std::fmt::Display) -> RecordError {
    RecordError::Kernel(format!("{what}: {e}"))
}

/// Held by every fsbench recorder while it mounts, uses and unmounts tracefs: without it, a
/// recorder that found tracefs mounted by another could see it unmounted in the middle of its
/// attach, and two could mount it at once (EBUSY).
const TRACEFS_LOCK: &str = "/run/fsbench-record.tracefs.lock";

/// tracefs, mounted for as long as the tracepoints are being attached when it was not mounted
/// (attaching reads the events' ids there); unmounted again after.
struct Tracefs {
    mounted_here: bool,
    /// The lock (an flock on [`TRACEFS_LOCK`]), released when closed, after the unmount.
    _lock: Option<std::fs::File>,
}

/// Takes the recorders' lock on tracefs (waits for another recorder's attach to end); `None`
/// where /run cannot hold it (then nothing is shared with another recorder but the race).
fn lock_tracefs() -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::File::options()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(TRACEFS_LOCK)
        .ok()?;
    loop {
        // SAFETY: our descriptor.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Some(file);
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return None;
        }
    }
}

impl Tracefs {
    fn ensure() -> Result<Tracefs, RecordError> {
        let lock = lock_tracefs();
        if Path::new(TRACEFS).join("events").is_dir() {
            return Ok(Tracefs {
                mounted_here: false,
                _lock: lock,
            });
        }
        let target = std::ffi::CString::new(TRACEFS).expect("no NUL");
        let fstype = c"tracefs";
        // SAFETY: valid NUL-terminated strings; no data argument.
        let rc = unsafe {
            libc::mount(
                fstype.as_ptr(),
                target.as_ptr(),
                fstype.as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        if rc != 0 {
            return Err(kernel(
                &format!("cannot mount tracefs on {TRACEFS} (the tracepoints' ids are read there)"),
                std::io::Error::last_os_error(),
            ));
        }
        Ok(Tracefs {
            mounted_here: true,
            _lock: lock,
        })
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        if self.mounted_here {
            let target = std::ffi::CString::new(TRACEFS).expect("no NUL");
            // SAFETY: a valid path; failure leaves a harmless tracefs mount.
            unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
        }
    }
}

/// The offset of `field` in a tracepoint's record, from its format file.
fn field_offset(event: &str, field: &str) -> Result<u32, RecordError> {
    let path = Path::new(TRACEFS).join("events").join(event).join("format");
    let text =
        std::fs::read_to_string(&path).map_err(|e| kernel(&path.display().to_string(), e))?;
    for line in text.lines() {
        let Some(decl) = line.trim().strip_prefix("field:") else {
            continue;
        };
        let Some((decl, rest)) = decl.split_once(';') else {
            continue;
        };
        if decl.split_whitespace().last() != Some(field) {
            continue;
        }
        let offset = rest
            .split(';')
            .find_map(|part| part.trim().strip_prefix("offset:"))
            .and_then(|n| n.parse().ok());
        if let Some(offset) = offset {
            return Ok(offset);
        }
    }
    Err(RecordError::Kernel(format!(
        "{}: no field {field} (this kernel's {event} tracepoint is not one the recorder knows)",
        path.display()
    )))
}

impl Probe {
    /// Loads, configures and attaches the program; `buffer` is the ring buffer's size in bytes
    /// (a power of two, a multiple of the page size).
    pub fn load(buffer: u32, classic_sched: bool) -> Result<Probe, RecordError> {
        let tracefs = Tracefs::ensure()?;
        let fork_child = field_offset("sched/sched_process_fork", "child_pid")?;
        // Older kernels have no group_dead (the process ends with its leader): 0.
        let group_dead = field_offset("sched/sched_process_exit", "group_dead").unwrap_or(0);
        if ![20, 44].contains(&fork_child) || ![0, 32].contains(&group_dead) {
            return Err(RecordError::Kernel(format!(
                "this kernel's sched tracepoints keep their fields where the recorder does not know them (sched_process_fork's child_pid at {fork_child}, sched_process_exit's group_dead at {group_dead}): report it with the kernel's version"
            )));
        }
        // sched_switch's and page_fault_user's fields where the program reads them; another
        // layout leaves the time blocked in faults unrecorded (`Probe::blocked_time`), nothing
        // else.
        let switch = [
            field_offset("sched/sched_switch", "prev_pid").unwrap_or(0),
            field_offset("sched/sched_switch", "prev_state").unwrap_or(0),
            field_offset("sched/sched_switch", "next_pid").unwrap_or(0),
        ];
        let fault_address = field_offset("exceptions/page_fault_user", "address").unwrap_or(0);
        let classic_switch = switch == [24, 32, 56];
        let waking = field_offset("sched/sched_waking", "pid").unwrap_or(0);
        let classic_waking = waking == 24;
        // The kernel's BTF as aya reads it: with it the raw programs' reads of a task's pid
        // are relocated to its offset; without it (none, not parsed, or the classic hooks
        // asked for) nothing is relocated and only the classic hooks are attached. A
        // relocation that fails loads the object again without BTF, classic hooks only.
        let mut raw_refused = None;
        let btf = if classic_sched {
            None
        } else {
            Btf::from_sys_fs()
                .map_err(|e| raw_refused = Some(format!("no kernel BTF: {}", error_chain(&e))))
                .ok()
        };
        let load = |btf: Option<&Btf>| {
            EbpfLoader::new()
                .btf(btf)
                .set_global("FORK_CHILD_PID_OFFSET", &fork_child, true)
                .set_global("EXIT_GROUP_DEAD_OFFSET", &group_dead, true)
                .set_global("SWITCH_PREV_PID_OFFSET", &switch[0], true)
                .set_global("SWITCH_PREV_STATE_OFFSET", &switch[1], true)
                .set_global("SWITCH_NEXT_PID_OFFSET", &switch[2], true)
                .set_global("WAKING_PID_OFFSET", &waking, true)
                .set_global("FAULT_ADDRESS_OFFSET", &fault_address, true)
                .set_global("RING_BYTES", &u64::from(buffer), true)
                .set_max_entries("events", buffer)
                .load(&OBJECT.bytes)
        };
        let (loaded, raw_sched) = match load(btf.as_ref()) {
            Err(e @ aya::EbpfError::BtfRelocationError(_)) => {
                raw_refused = Some(error_chain(&e));
                (load(None), false)
            }
            other => (other, btf.is_some()),
        };
        let mut ebpf = loaded.map_err(|e| {
            if is_permission(&e) {
                RecordError::NeedsRoot
            } else {
                kernel("cannot load the recorder's BPF program", error_chain(&e))
            }
        })?;
        {
            let mut conf: Array<_, u32> = Array::try_from(ebpf.map_mut("conf").expect("conf map"))
                .map_err(|e| kernel("conf", e))?;
            for s in SYSCALLS {
                let value = u32::from_le_bytes([1, s.path_a, s.path_b, s.special]);
                conf.set(s.nr, value, 0).map_err(|e| kernel("conf", e))?;
            }
        }
        // The system-call hooks are raw tracepoints (bpf/record.bpf.c says why), as are those
        // that mark interrupt context (each program on three: hard interrupts, softirqs,
        // timers' callbacks); the others classic ones, by category and event.
        const IRQ_ENTER: &[&str] = &["irq_handler_entry", "softirq_entry", "hrtimer_expire_entry"];
        const IRQ_LEAVE: &[&str] = &["irq_handler_exit", "softirq_exit", "hrtimer_expire_exit"];
        for (name, classic, raw) in [
            ("sys_enter", None, &["sys_enter"][..]),
            ("sys_exit", None, &["sys_exit"][..]),
            // Leaving before entering: an entry counted before its exit's program is attached
            // would leave the CPU marked as in an interrupt for good (an exit without its entry
            // is ignored).
            ("irq_leave", None, IRQ_LEAVE),
            ("irq_enter", None, IRQ_ENTER),
            (
                "process_fork",
                Some(("sched", "sched_process_fork")),
                &[][..],
            ),
            (
                "process_exec",
                Some(("sched", "sched_process_exec")),
                &[][..],
            ),
            (
                "process_exit",
                Some(("sched", "sched_process_exit")),
                &[][..],
            ),
        ] {
            let program = ebpf.program_mut(name).expect("the object has its programs");
            let refused = |e: aya::programs::ProgramError| {
                kernel(
                    &format!("the kernel refused the program {name}"),
                    error_chain(&e),
                )
            };
            let cannot = |at: String, e: aya::programs::ProgramError| {
                kernel(&format!("cannot attach to {at}"), error_chain(&e))
            };
            match classic {
                None => {
                    let program: &mut RawTracePoint =
                        program.try_into().map_err(|e| kernel(name, e))?;
                    program.load().map_err(refused)?;
                    for point in raw {
                        program
                            .attach(point)
                            .map_err(|e| cannot(format!("the raw tracepoint {point}"), e))?;
                    }
                }
                Some((category, event)) => {
                    let program: &mut TracePoint =
                        program.try_into().map_err(|e| kernel(name, e))?;
                    program.load().map_err(refused)?;
                    program
                        .attach(category, event)
                        .map_err(|e| cannot(format!("{category}/{event}"), e))?;
                }
            }
        }
        // sched_switch, sched_waking and page_fault_user run on every context switch, wakeup and
        // user page fault of the whole system: their raw tracepoints (no perf record built
        // first) where the kernel has BTF (the programs read a task's pid at the offset it
        // gives) and accepts them, else the classic ones.
        let mut raw_attached = [false; 3];
        for (i, (category, name)) in HOOKS.into_iter().enumerate() {
            if raw_sched {
                let raw_name = format!("{name}_raw");
                let program: &mut RawTracePoint = ebpf
                    .program_mut(&raw_name)
                    .expect("the object has its programs")
                    .try_into()
                    .map_err(|e| kernel(name, e))?;
                let attached = program
                    .load()
                    .map_err(|e| format!("{raw_name} refused: {}", error_chain(&e)))
                    .and_then(|()| {
                        program
                            .attach(name)
                            .map(drop)
                            .map_err(|e| format!("{raw_name} not attached: {}", error_chain(&e)))
                    });
                raw_attached[i] = attached
                    .map_err(|e| raw_refused = raw_refused.take().or(Some(e)))
                    .is_ok();
            }
            if !raw_attached[i] {
                let program: &mut TracePoint = ebpf
                    .program_mut(name)
                    .expect("the object has its programs")
                    .try_into()
                    .map_err(|e| kernel(name, e))?;
                program.load().map_err(|e| {
                    kernel(
                        &format!("the kernel refused the program {name}"),
                        error_chain(&e),
                    )
                })?;
                program.attach(category, name).map_err(|e| {
                    kernel(
                        &format!("cannot attach to {category}/{name}"),
                        error_chain(&e),
                    )
                })?;
            }
        }
        let blocked_time =
            (raw_attached[0] || classic_switch) && (raw_attached[2] || fault_address == 8);
        let wakeups = raw_attached[1] || classic_waking;
        drop(tracefs);
        let ring = RingBuf::try_from(ebpf.take_map("events").expect("events map"))
            .map_err(|e| kernel("events", e))?;
        let traced = BpfHashMap::try_from(ebpf.take_map("traced").expect("traced map"))
            .map_err(|e| kernel("traced", e))?;
        Ok(Probe {
            ebpf,
            ring,
            traced,
            bad_record: None,
            blocked_time,
            wakeups,
            raw_hooks: raw_attached,
            raw_refused,
        })
    }

    /// Traces this process (thread group) from now on.
    pub fn trace(&mut self, pid: u32) -> Result<(), RecordError> {
        self.traced
            .insert(pid, 1, 0)
            .map_err(|e| kernel(&format!("cannot trace process {pid}"), e))
    }

    /// Waits up to `timeout_ms` for records, or for `end` (a process's pidfd) to say that
    /// its process has ended, then takes every record there is.
    pub fn poll(&mut self, calls: &mut Calls, timeout_ms: i32, end: Option<RawFd>) {
        let mut pfds = [
            libc::pollfd {
                fd: self.ring.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: end.unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfds (a negative descriptor is ignored).
        unsafe { libc::poll(pfds.as_mut_ptr(), 2, timeout_ms) };
        self.drain(calls);
    }

    /// Takes every record there is, without waiting.
    pub fn drain(&mut self, calls: &mut Calls) {
        while let Some(item) = self.ring.next() {
            if let Err(e) = calls.push_record(&item) {
                self.bad_record.get_or_insert(e);
            }
        }
    }

    /// The traced processes still running (thread-group leaders only), but `except`.
    pub fn still_running(&self, except: Option<u32>) -> Vec<u32> {
        let mut pids: Vec<u32> = self
            .traced
            .keys()
            .filter_map(Result::ok)
            .filter(|&p| {
                Some(p) != except && crate::procfs::alive(p) && crate::procfs::is_process(p)
            })
            .collect();
        pids.sort_unstable();
        pids
    }

    pub fn counts(&self) -> Result<Counts, RecordError> {
        let counts: Array<_, u64> = Array::try_from(self.ebpf.map("counts").expect("counts map"))
            .map_err(|e| kernel("counts", e))?;
        let get = |i| counts.get(&i, 0).map_err(|e| kernel("counts", e));
        Ok(Counts {
            lost: get(0)?,
            table_full: get(1)?,
            truncated: get(2)?,
        })
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

fn is_permission(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if matches!(io.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES)) {
                return true;
            }
        }
        source = s.source();
    }
    false
}
