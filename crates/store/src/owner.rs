//! Which process owns a running run: its pid, start time and boot, so a run whose process is
//! gone (SIGKILL, power loss) is recognised as interrupted, and a pid reused by another process
//! is not mistaken for the owner.

use std::path::Path;

/// `"<boot id> <pid> <start time in clock ticks since boot>"` of this process.
pub fn current() -> String {
    let pid = std::process::id();
    format!(
        "{} {pid} {}",
        boot_id(),
        start_time(pid).unwrap_or_default()
    )
}

/// The pid of an owner text, for messages.
pub fn pid(owner: &str) -> Option<u32> {
    owner.split_whitespace().nth(1)?.parse().ok()
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
    }
}
