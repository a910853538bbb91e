//! Programs a workload runs besides its native code (dbench, a shell's commands): whether one
//! is installed, as the shell that would run it finds it on PATH.

/// Whether `program` is an executable file in a directory of PATH.
pub fn installed(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_program_is_found_on_path_or_not_at_all() {
        assert!(super::installed("sh"));
        assert!(!super::installed("no-such-program-fsbench"));
    }
}
