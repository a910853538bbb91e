//! The processes descended from one, read from /proc: a sample's reaper finds the children a
//! workload left, the recorder traces a running process's tree, and a host command that
//! outlived its time bound is ended with everything it started.

use std::collections::HashMap;

/// Every process there is now, with its parent: `(pid, ppid)` from `/proc/PID/stat`.
fn with_parents() -> impl Iterator<Item = (u32, u32)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // "pid (comm) state ppid ...": the command's name may itself hold spaces and
            // parentheses, so the parent is counted from the last `)`.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))?
                .parse::<u32>()
                .ok()?;
            Some((pid, ppid))
        })
}

/// The children of process `pid` (those of any of its threads).
pub fn children_of(pid: u32) -> Vec<u32> {
    with_parents()
        .filter(|&(_, ppid)| ppid == pid)
        .map(|(child, _)| child)
        .collect()
}

/// The process's descendants now (children before grandchildren).
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (child, ppid) in with_parents() {
        children.entry(ppid).or_default().push(child);
    }
    let mut out = Vec::new();
    let mut queue = std::collections::VecDeque::from([pid]);
    while let Some(p) = queue.pop_front() {
        for &c in children.get(&p).into_iter().flatten() {
            out.push(c);
            queue.push_back(c);
        }
    }
    out
}

/// Kills `pid` and every process descended from it, and returns them (`pid` first). Each is
/// stopped (SIGSTOP) as it is found, so that none can fork, or end and leave its children to
/// init, while the tree is read; then all are killed (SIGKILL). `pid` must be the caller's own
/// child, not yet waited for (its pid cannot have been reused). A process that had already left
/// the tree (a daemon whose parent ended) is not in it, and is not touched.
pub fn kill_tree(pid: u32) -> Vec<u32> {
    let signal = |p: u32, sig: libc::c_int| {
        // SAFETY: a plain system call; every pid is `pid` or a live descendant of it found
        // while its parent was stopped.
        unsafe { libc::kill(p as libc::pid_t, sig) };
    };
    signal(pid, libc::SIGSTOP);
    let mut tree = vec![pid];
    // Each round stops the processes found; a stopped process forks no more, so the tree stops
    // growing (bounded all the same).
    for _ in 0..64 {
        let new: Vec<u32> = descendants(pid)
            .into_iter()
            .filter(|p| !tree.contains(p))
            .collect();
        if new.is_empty() {
            break;
        }
        for &p in &new {
            signal(p, libc::SIGSTOP);
        }
        tree.extend(new);
    }
    for &p in &tree {
        signal(p, libc::SIGKILL);
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `pid` is still a process that runs (a zombie, ended and not yet reaped, does not).
    fn running(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .is_some_and(|state| state != "Z" && state != "X")
        })
    }

    /// A shell that started a child and a grandchild: all three are found and killed, and
    /// nothing else.
    #[test]
    fn a_tree_is_killed_whole_and_only_it() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        let bystander = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "sh -c 'sleep 30 & echo $! > {p}.inner; wait' & echo $! > {p}; wait",
                p = pids.display()
            ))
            .spawn()
            .unwrap();
        let inner = pids.with_extension("inner");
        let began = std::time::Instant::now();
        while !(inner.exists() && std::fs::read_to_string(&inner).unwrap().ends_with('\n')) {
            assert!(began.elapsed().as_secs() < 20, "the tree never started");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let middle: u32 = std::fs::read_to_string(&pids)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let grandchild: u32 = std::fs::read_to_string(&inner)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let found = descendants(child.id());
        assert!(
            found.contains(&middle) && found.contains(&grandchild),
            "{found:?}"
        );
        let killed = kill_tree(child.id());
        assert_eq!(killed[0], child.id());
        assert!(
            killed.contains(&middle) && killed.contains(&grandchild),
            "{killed:?}"
        );
        assert!(!killed.contains(&bystander.id()));
        let status = child.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(libc::SIGKILL)
        );
        let began = std::time::Instant::now();
        while running(middle) || running(grandchild) {
            assert!(began.elapsed().as_secs() < 10, "a descendant still runs");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(running(bystander.id()), "the bystander was not touched");
        let mut bystander = bystander;
        bystander.kill().unwrap();
        bystander.wait().unwrap();
    }
}
