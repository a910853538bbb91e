//! The x86_64 system calls the recorder captures: their numbers, names, which arguments are
//! paths (copied by the BPF program at entry) and which directory descriptors those paths are
//! relative to. Calls that fsbench's trace cannot express yet are captured too, to be counted
//! by name in the trace's end (`unsupported`), never dropped without a word.

/// No such argument.
pub const NO_ARG: u8 = 255;

/// Special argument handling in the BPF program (`SPECIAL_*`).
pub const SPECIAL_CLONE3: u8 = 1;
pub const SPECIAL_IOVEC: u8 = 2;
pub const SPECIAL_OPENAT2: u8 = 3;
/// ioctl, kept only for FIONCLEX and FIOCLEX (a descriptor's close-on-exec flag).
pub const SPECIAL_FIOCLEX: u8 = 4;

/// One captured system call.
#[derive(Clone, Copy, Debug)]
pub struct Syscall {
    pub nr: u32,
    pub name: &'static str,
    /// Arguments that are path strings, and the directory descriptor each is relative to.
    pub path_a: u8,
    pub dirfd_a: u8,
    pub path_b: u8,
    pub dirfd_b: u8,
    pub special: u8,
    /// Not expressible in a trace: counted by name when it touches the root. `fds` lists the
    /// descriptor arguments that say whether it does (none: it always counts).
    pub unsupported: bool,
    pub fds: &'static [u8],
}

const fn call(nr: u32, name: &'static str) -> Syscall {
    Syscall {
        nr,
        name,
        path_a: NO_ARG,
        dirfd_a: NO_ARG,
        path_b: NO_ARG,
        dirfd_b: NO_ARG,
        special: 0,
        unsupported: false,
        fds: &[],
    }
}

const fn path(nr: u32, name: &'static str, arg: u8) -> Syscall {
    Syscall {
        path_a: arg,
        ..call(nr, name)
    }
}

const fn path_at(nr: u32, name: &'static str, dirfd: u8, arg: u8) -> Syscall {
    Syscall {
        path_a: arg,
        dirfd_a: dirfd,
        ..call(nr, name)
    }
}

const fn two_paths(nr: u32, name: &'static str, dirs: [u8; 2], args: [u8; 2]) -> Syscall {
    Syscall {
        path_a: args[0],
        dirfd_a: dirs[0],
        path_b: args[1],
        dirfd_b: dirs[1],
        ..call(nr, name)
    }
}

const fn special(s: Syscall, special: u8) -> Syscall {
    Syscall { special, ..s }
}

const fn unsupported(s: Syscall, fds: &'static [u8]) -> Syscall {
    Syscall {
        unsupported: true,
        fds,
        ..s
    }
}

/// Every captured call, by number.
pub const SYSCALLS: &[Syscall] = &[
    call(0, "read"),
    call(1, "write"),
    path(2, "open", 0),
    call(3, "close"),
    path(4, "stat", 0),
    call(5, "fstat"),
    path(6, "lstat", 0),
    call(8, "lseek"),
    call(9, "mmap"),
    call(11, "munmap"),
    // Only FIONCLEX and FIOCLEX (filtered in the kernel): the close-on-exec flag that decides
    // which descriptors an exec keeps (Python sets it so: os.set_inheritable, pass_fds).
    special(call(16, "ioctl"), SPECIAL_FIOCLEX),
    call(17, "pread64"),
    call(18, "pwrite64"),
    special(call(19, "readv"), SPECIAL_IOVEC),
    special(call(20, "writev"), SPECIAL_IOVEC),
    path(21, "access", 0),
    call(26, "msync"),
    call(32, "dup"),
    call(33, "dup2"),
    call(56, "clone"),
    call(57, "fork"),
    call(58, "vfork"),
    call(72, "fcntl"),
    call(74, "fsync"),
    call(75, "fdatasync"),
    path(76, "truncate", 0),
    call(77, "ftruncate"),
    call(78, "getdents"),
    path(80, "chdir", 0),
    call(81, "fchdir"),
    two_paths(82, "rename", [NO_ARG, NO_ARG], [0, 1]),
    path(83, "mkdir", 0),
    path(84, "rmdir", 0),
    path(85, "creat", 0),
    two_paths(86, "link", [NO_ARG, NO_ARG], [0, 1]),
    path(87, "unlink", 0),
    // symlink(target, linkpath): the target is kept as given, never resolved.
    two_paths(88, "symlink", [NO_ARG, NO_ARG], [0, 1]),
    path(89, "readlink", 0),
    path(90, "chmod", 0),
    call(91, "fchmod"),
    path(92, "chown", 0),
    call(93, "fchown"),
    path(94, "lchown", 0),
    path(132, "utime", 0),
    call(162, "sync"),
    call(217, "getdents64"),
    path(235, "utimes", 0),
    path_at(257, "openat", 0, 1),
    path_at(258, "mkdirat", 0, 1),
    path_at(261, "futimesat", 0, 1),
    path_at(262, "newfstatat", 0, 1),
    path_at(263, "unlinkat", 0, 1),
    two_paths(264, "renameat", [0, 2], [1, 3]),
    two_paths(265, "linkat", [0, 2], [1, 3]),
    two_paths(266, "symlinkat", [NO_ARG, 1], [0, 2]),
    path_at(267, "readlinkat", 0, 1),
    path_at(260, "fchownat", 0, 1),
    path_at(268, "fchmodat", 0, 1),
    path_at(269, "faccessat", 0, 1),
    call(277, "sync_file_range"),
    path_at(280, "utimensat", 0, 1),
    call(285, "fallocate"),
    call(292, "dup3"),
    special(call(295, "preadv"), SPECIAL_IOVEC),
    special(call(296, "pwritev"), SPECIAL_IOVEC),
    call(306, "syncfs"),
    two_paths(316, "renameat2", [0, 2], [1, 3]),
    special(call(327, "preadv2"), SPECIAL_IOVEC),
    special(call(328, "pwritev2"), SPECIAL_IOVEC),
    path_at(332, "statx", 0, 1),
    special(call(435, "clone3"), SPECIAL_CLONE3),
    call(436, "close_range"),
    special(path_at(437, "openat2", 0, 1), SPECIAL_OPENAT2),
    path_at(439, "faccessat2", 0, 1),
    path_at(452, "fchmodat2", 0, 1),
    // Seen, not expressible: counted by name in the trace's end.
    unsupported(call(25, "mremap"), &[]),
    unsupported(call(40, "sendfile"), &[0, 1]),
    unsupported(call(73, "flock"), &[0]),
    unsupported(path(133, "mknod", 0), &[]),
    unsupported(path(137, "statfs", 0), &[]),
    unsupported(call(138, "fstatfs"), &[0]),
    unsupported(call(187, "readahead"), &[0]),
    unsupported(path(188, "setxattr", 0), &[]),
    unsupported(path(189, "lsetxattr", 0), &[]),
    unsupported(call(190, "fsetxattr"), &[0]),
    unsupported(path(191, "getxattr", 0), &[]),
    unsupported(path(192, "lgetxattr", 0), &[]),
    unsupported(call(193, "fgetxattr"), &[0]),
    unsupported(path(194, "listxattr", 0), &[]),
    unsupported(path(195, "llistxattr", 0), &[]),
    unsupported(call(196, "flistxattr"), &[0]),
    unsupported(path(197, "removexattr", 0), &[]),
    unsupported(path(198, "lremovexattr", 0), &[]),
    unsupported(call(199, "fremovexattr"), &[0]),
    unsupported(call(209, "io_submit"), &[]),
    unsupported(call(221, "fadvise64"), &[0]),
    unsupported(path_at(259, "mknodat", 0, 1), &[]),
    unsupported(call(275, "splice"), &[0, 2]),
    unsupported(call(276, "tee"), &[0, 1]),
    unsupported(path_at(303, "name_to_handle_at", 0, 1), &[]),
    unsupported(call(326, "copy_file_range"), &[0, 2]),
    unsupported(call(426, "io_uring_enter"), &[]),
];

/// The call with this number, if captured.
pub fn by_nr(nr: u32) -> Option<&'static Syscall> {
    SYSCALLS.iter().find(|s| s.nr == nr)
}

/// A table indexed by number (the resolver's lookup: no search per call).
pub fn table() -> Vec<Option<&'static Syscall>> {
    let mut table = vec![None; 512];
    for s in SYSCALLS {
        table[s.nr as usize] = Some(s);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_distinct_and_fit_the_bpf_table() {
        let mut seen = std::collections::BTreeSet::new();
        for s in SYSCALLS {
            assert!(s.nr < 512, "{}", s.name);
            assert!(seen.insert(s.nr), "{} twice", s.nr);
            assert!(s.path_a == NO_ARG || s.path_a < 6);
        }
        // Spot checks against <asm/unistd_64.h>.
        assert_eq!(by_nr(libc::SYS_openat as u32).unwrap().name, "openat");
        assert_eq!(by_nr(libc::SYS_renameat2 as u32).unwrap().name, "renameat2");
        assert_eq!(by_nr(libc::SYS_statx as u32).unwrap().name, "statx");
        assert_eq!(by_nr(libc::SYS_clone3 as u32).unwrap().name, "clone3");
        assert_eq!(
            by_nr(libc::SYS_fchmodat2 as u32).map(|s| s.name),
            Some("fchmodat2")
        );
        assert_eq!(
            by_nr(libc::SYS_io_uring_enter as u32).unwrap().name,
            "io_uring_enter"
        );
        assert_eq!(
            by_nr(libc::SYS_copy_file_range as u32).unwrap().name,
            "copy_file_range"
        );
    }
}
