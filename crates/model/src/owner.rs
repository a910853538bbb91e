//! Which process owns something — a running run, a target's ledger, a zfs-fuse daemon fsbench
//! started: its pid, start time and boot, so a thing whose process is gone (SIGKILL, power
//! loss) is recognised as orphaned, and a pid reused by another process (after a reboot, or
//! once the pid wrapped) is not mistaken for the owner.

use std::path::Path;

/// `"<boot id> <pid> <start time in clock ticks since boot>"` of this process.
pub fn current() -> String {
    of(std::process::id()).unwrap_or_else(|| format!("{} {} 0", boot_id(), std::process::id()))
}

/// The owner text of process `pid` (None when it does not run).
pub fn of(pid: u32) -> Option<String> {
    Some(format!("{} {pid} {}", boot_id(), start_time(pid)?))
}

/// The pid of an owner text, for messages.
pub fn pid(owner: &str) -> Option<u32> {
    owner.split_whitespace().nth(1)?.parse().ok()
}

/// The start time of an owner text (clock ticks since its boot).
pub fn start(owner: &str) -> Option<u64> {
    owner.split_whitespace().nth(2)?.parse().ok()
}

/// True when an owner text is of this boot (its pid and start time name a process of it).
pub fn is_this_boot(owner: &str) -> bool {
    owner.split_whitespace().next() == Some(boot_id().as_str())
}

/// True when the process an owner text names is still running (same boot, same pid, same
/// start time).
pub fn is_alive(owner: &str) -> bool {
    let mut parts = owner.split_whitespace();
    let (Some(boot), Some(pid), Some(start)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    boot == boot_id() && start_time(pid).is_some_and(|s| s.to_string() == start)
}

/// When process `pid` started, by the wall clock (None when it does not run): the boot time
/// (/proc/stat `btime`) plus its start time, which the kernel counts in USER_HZ ticks (100 in
/// Linux's ABI on every architecture fsbench runs on). For things recorded before owners were
/// (a ledger of fsbench 0.1 names only a pid): a process that started after the record was
/// last written is not the one that wrote it.
pub fn started_at(pid: u32) -> Option<std::time::SystemTime> {
    const USER_HZ: u64 = 100;
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let boot: u64 = stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    let ticks = start_time(pid)?;
    Some(
        std::time::UNIX_EPOCH
            + std::time::Duration::from_secs(boot)
            + std::time::Duration::from_millis(ticks * 1000 / USER_HZ),
    )
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "-".to_string())
}

/// Field 22 of /proc/PID/stat (the process's start time), counted after the command name,
/// which may itself contain spaces and parentheses.
fn start_time(pid: u32) -> Option<u64> {
    let text =
        std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_finished_one_is_not() {
        let me = current();
        assert!(is_alive(&me), "{me}");
        assert_eq!(pid(&me), Some(std::process::id()));
        assert_eq!(start(&me), start_time(std::process::id()));
        assert_eq!(of(std::process::id()).as_deref(), Some(me.as_str()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let child_pid = child.id();
        let owner = format!(
            "{} {child_pid} {}",
            boot_id(),
            start_time(child_pid).unwrap_or(0)
        );
        child.wait().unwrap();
        assert!(!is_alive(&owner), "{owner}");
        // Same pid, another start time: a reused pid is not the owner.
        let parts: Vec<&str> = me.split(' ').collect();
        assert!(!is_alive(&format!("{} {} 1", parts[0], parts[1])));
        assert!(!is_alive("garbage"));
        assert!(is_this_boot(&me) && !is_this_boot(&me.replacen(parts[0], "another", 1)));
        // This process started a moment ago, by the wall clock (to the second: btime is).
        let started = started_at(std::process::id()).unwrap();
        let age = std::time::SystemTime::now()
            .duration_since(started)
            .unwrap_or_default();
        assert!(age < std::time::Duration::from_secs(600), "{age:?}");
        assert!(started_at(child_pid).is_none());
    }
}
