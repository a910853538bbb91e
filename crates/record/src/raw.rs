//! The records the BPF program sends up (mirrors `struct call`, `struct path_call`,
//! `struct call_exit` and `struct path_exit` in bpf/record.bpf.c), and their compact form kept
//! in memory until the recording ends: a call's entry record and its exit record joined into
//! one call, the fixed fields as they came, path strings moved into one shared arena.

/// Record kinds (bpf/record.bpf.c `KIND_*`).
pub const KIND_CALL: u32 = 1;
pub const KIND_PATH_CALL: u32 = 2;
pub const KIND_EXEC: u32 = 3;
/// A wait for I/O in a page fault between a thread's calls: `enter_ns` when the fault began,
/// `exit_ns` when the thread ran again, `args[0]` the faulting address.
pub const KIND_FAULT_WAIT: u32 = 4;
/// A call's end (`struct call_exit`): its thread's call record sent at entry ends here.
pub const KIND_EXIT: u32 = 5;
/// A call's end with the paths its entry could not read (`struct path_exit`).
pub const KIND_EXIT_PATHS: u32 = 6;

/// Record flags (`FLAG_*`).
pub const FLAG_EXTRA: u32 = 1;
pub const FLAG_TRUNCATED: u32 = 2;
pub const FLAG_PATH1_FAULT: u32 = 4;
pub const FLAG_PATH2_FAULT: u32 = 8;

/// The longest path the BPF program copies, with its NUL.
pub const PATH_MAX_BYTES: usize = 1024;
/// Bytes of a call record without paths (`struct call`).
pub const CALL_BYTES: usize = 4 * 4 + 8 * 3 + 8 * 6 + 8 * 2 + 4 * 4 + 4 * 2 + 8;
/// Bytes of a call record with paths at most (`struct path_call`): a record is
/// [`CALL_BYTES`] followed by its paths' bytes, each with its NUL.
pub const PATH_CALL_BYTES: usize = CALL_BYTES + 2 * PATH_MAX_BYTES;
/// Bytes of an exit record without paths (`struct call_exit`).
pub const EXIT_BYTES: usize = 4 * 4 + 8 * 2 + 4 * 4;

/// One call as the kernel reported it; its paths are ranges of [`Calls::arena`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Call {
    pub kind: u32,
    pub nr: u32,
    pub pid: u32,
    pub tid: u32,
    pub enter_ns: u64,
    pub exit_ns: u64,
    pub ret: i64,
    pub args: [u64; 6],
    pub extra: u64,
    pub extra2: u64,
    pub flags: u32,
    /// The last traced thread that woke this one before the call (0: none), and when (the
    /// kernel's monotonic clock): the same wakeup on every call until the next.
    pub waker_tid: u32,
    pub woken_ns: u64,
    /// Nanoseconds the recorder's own probes took on the thread since its previous call's
    /// exit timestamp (that call's exit probe, this call's entry probe before its timestamp).
    pub probe_ns: u32,
    /// Ranges of the arena: (start, length without the NUL); `u32::MAX` length for none.
    pub path1: (u32, u32),
    pub path2: (u32, u32),
}

const NO_PATH: PathRange = (0, u32::MAX);

/// A path's bytes in [`Calls::arena`]: (start, length without the NUL); `u32::MAX` length for
/// none.
pub type PathRange = (u32, u32);

/// Every call of a recording, in the order they ended, with their path strings.
#[derive(Debug, Default)]
pub struct Calls {
    pub calls: Vec<Call>,
    pub arena: Vec<u8>,
    /// Calls entered and not yet ended, by thread (a call that never returns — exit_group, a
    /// recording stopped first — is never kept, as before it was never sent).
    open: std::collections::HashMap<u32, Call>,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_ne_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

impl Calls {
    /// Parses one record from the ring buffer and keeps it; a record of an unexpected size is
    /// refused (a program and a parser out of step).
    pub fn push_record(&mut self, b: &[u8]) -> Result<(), String> {
        if b.len() >= 4 && matches!(u32_at(b, 0), KIND_EXIT | KIND_EXIT_PATHS) {
            return self.push_exit(b);
        }
        if b.len() < CALL_BYTES || b.len() > PATH_CALL_BYTES {
            return Err(format!(
                "a record of {} bytes (expected {CALL_BYTES} to {PATH_CALL_BYTES})",
                b.len()
            ));
        }
        let mut args = [0u64; 6];
        for (i, arg) in args.iter_mut().enumerate() {
            *arg = u64_at(b, 40 + 8 * i);
        }
        let mut call = Call {
            kind: u32_at(b, 0),
            nr: u32_at(b, 4),
            pid: u32_at(b, 8),
            tid: u32_at(b, 12),
            enter_ns: u64_at(b, 16),
            exit_ns: u64_at(b, 24),
            ret: u64_at(b, 32) as i64,
            args,
            extra: u64_at(b, 88),
            extra2: u64_at(b, 96),
            flags: u32_at(b, 104),
            waker_tid: u32_at(b, 120),
            probe_ns: u32_at(b, 124),
            woken_ns: u64_at(b, 128),
            path1: NO_PATH,
            path2: NO_PATH,
        };
        if call.kind == KIND_PATH_CALL {
            let (len1, len2) = (u32_at(b, 108) as i32, u32_at(b, 112) as i32);
            (call.path1, call.path2) = self.keep_paths(&b[CALL_BYTES..], len1, len2)?;
        }
        if matches!(call.kind, KIND_CALL | KIND_PATH_CALL) {
            // Its end comes in the thread's next record of a call.
            self.open.insert(call.tid, call);
        } else {
            self.calls.push(call);
        }
        Ok(())
    }

    /// A call's end: joined with its thread's call (an end without one — the call began before
    /// the recording — is dropped). Its number is not compared: a tracer that changed the call
    /// (ptrace, seccomp) leaves the call as entered with the result it had, as before calls were
    /// sent up at entry.
    fn push_exit(&mut self, b: &[u8]) -> Result<(), String> {
        if b.len() < EXIT_BYTES || b.len() > EXIT_BYTES + 2 * PATH_MAX_BYTES {
            return Err(format!(
                "an exit record of {} bytes (expected {EXIT_BYTES} to {})",
                b.len(),
                EXIT_BYTES + 2 * PATH_MAX_BYTES
            ));
        }
        let tid = u32_at(b, 12);
        let Some(mut call) = self.open.remove(&tid) else {
            return Ok(());
        };
        call.exit_ns = u64_at(b, 16);
        call.ret = u64_at(b, 24) as i64;
        if u32_at(b, 0) == KIND_EXIT_PATHS {
            let (len1, len2) = (u32_at(b, 36) as i32, u32_at(b, 40) as i32);
            (call.path1, call.path2) = self.keep_paths(&b[EXIT_BYTES..], len1, len2)?;
            call.flags = (call.flags & !(FLAG_PATH1_FAULT | FLAG_PATH2_FAULT | FLAG_TRUNCATED))
                | u32_at(b, 32);
        }
        self.calls.push(call);
        Ok(())
    }

    /// Keeps a record's two paths (`len1` and `len2` bytes with their NULs, or ≤ 0 for none).
    fn keep_paths(
        &mut self,
        paths: &[u8],
        len1: i32,
        len2: i32,
    ) -> Result<(PathRange, PathRange), String> {
        let first = (len1.max(0) as usize).min(paths.len());
        if first + len2.max(0) as usize != paths.len() {
            return Err(format!(
                "a record of {} path bytes with paths of {len1} and {len2}",
                paths.len()
            ));
        }
        Ok((
            self.keep(&paths[..first], len1),
            self.keep(&paths[first..], len2),
        ))
    }

    fn keep(&mut self, buf: &[u8], len_with_nul: i32) -> (u32, u32) {
        if len_with_nul <= 0 {
            return NO_PATH;
        }
        let len = (len_with_nul as usize - 1).min(buf.len());
        let start = self.arena.len() as u32;
        self.arena.extend_from_slice(&buf[..len]);
        (start, len as u32)
    }

    /// The bytes of a path range, `None` for none.
    pub fn path(&self, range: (u32, u32)) -> Option<&[u8]> {
        if range.1 == u32::MAX {
            return None;
        }
        let start = range.0 as usize;
        Some(&self.arena[start..start + range.1 as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An exit record (`struct call_exit`, then `paths` for KIND_EXIT_PATHS, "c/d\0zz\0"
    /// being paths of 4 and 3 bytes with their NULs).
    fn exit(kind: u32, nr: u32, tid: u32, exit_ns: u64, ret: i64, paths: &[u8]) -> Vec<u8> {
        let mut e = vec![0u8; EXIT_BYTES];
        e[0..4].copy_from_slice(&kind.to_ne_bytes());
        e[4..8].copy_from_slice(&nr.to_ne_bytes());
        e[8..12].copy_from_slice(&10u32.to_ne_bytes());
        e[12..16].copy_from_slice(&tid.to_ne_bytes());
        e[16..24].copy_from_slice(&exit_ns.to_ne_bytes());
        e[24..32].copy_from_slice(&ret.to_ne_bytes());
        if !paths.is_empty() {
            let first = paths.iter().position(|&c| c == 0).unwrap() + 1;
            e[36..40].copy_from_slice(&(first as i32).to_ne_bytes());
            e[40..44].copy_from_slice(&((paths.len() - first) as i32).to_ne_bytes());
        }
        e.extend_from_slice(paths);
        e
    }

    #[test]
    fn records_parse_at_the_c_layout() {
        let mut b = vec![0u8; CALL_BYTES + 4 + 3];
        b[0..4].copy_from_slice(&KIND_PATH_CALL.to_ne_bytes());
        b[4..8].copy_from_slice(&257u32.to_ne_bytes());
        b[8..12].copy_from_slice(&10u32.to_ne_bytes());
        b[12..16].copy_from_slice(&11u32.to_ne_bytes());
        b[16..24].copy_from_slice(&5u64.to_ne_bytes());
        b[24..32].copy_from_slice(&9u64.to_ne_bytes());
        b[32..40].copy_from_slice(&(-2i64).to_ne_bytes());
        b[40 + 8..40 + 16].copy_from_slice(&77u64.to_ne_bytes());
        b[104..108].copy_from_slice(&FLAG_EXTRA.to_ne_bytes());
        b[108..112].copy_from_slice(&4i32.to_ne_bytes());
        b[112..116].copy_from_slice(&3i32.to_ne_bytes());
        b[CALL_BYTES..].copy_from_slice(b"a/b\0xy\0");
        let mut calls = Calls::default();
        calls.push_record(&b).unwrap();
        assert!(calls.calls.is_empty(), "a call is kept once it has ended");
        calls
            .push_record(&exit(KIND_EXIT, 257, 11, 9, -2, b""))
            .unwrap();
        let c = calls.calls[0];
        assert_eq!(
            (c.nr, c.pid, c.tid, c.enter_ns, c.exit_ns, c.ret),
            (257, 10, 11, 5, 9, -2)
        );
        assert_eq!(c.args[1], 77);
        assert_eq!(calls.path(c.path1), Some(&b"a/b"[..]));
        assert_eq!(calls.path(c.path2), Some(&b"xy"[..]));
        // An exit with no call entered on its thread (its entry came before the recording).
        calls
            .push_record(&exit(KIND_EXIT, 257, 12, 9, 0, b""))
            .unwrap();
        assert_eq!(calls.calls.len(), 1);
        // The paths an entry could not read, from the exit.
        b[104..108].copy_from_slice(&(FLAG_EXTRA | FLAG_PATH1_FAULT).to_ne_bytes());
        calls.push_record(&b).unwrap();
        calls
            .push_record(&exit(KIND_EXIT_PATHS, 257, 11, 20, 3, b"c/d\0zz\0"))
            .unwrap();
        let c = calls.calls[1];
        assert_eq!((c.exit_ns, c.ret, c.flags), (20, 3, FLAG_EXTRA));
        assert_eq!(calls.path(c.path1), Some(&b"c/d"[..]));
        assert_eq!(calls.path(c.path2), Some(&b"zz"[..]));
        // An exit whose number a tracer changed ends the call as entered.
        calls.push_record(&b).unwrap();
        calls
            .push_record(&exit(KIND_EXIT, 0, 11, 30, 0, b""))
            .unwrap();
        assert_eq!((calls.calls[2].nr, calls.calls[2].exit_ns), (257, 30));
        // An exit record cut short: a program and parser out of step.
        calls.push_record(&b).unwrap();
        assert!(calls
            .push_record(&exit(KIND_EXIT, 257, 11, 9, 0, b"")[..40])
            .is_err());
        assert!(calls.push_record(&b[..100]).is_err());
        assert!(
            calls.push_record(&b[..CALL_BYTES + 5]).is_err(),
            "paths cut short"
        );
    }
}
