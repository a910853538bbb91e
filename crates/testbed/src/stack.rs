//! The device guard's walk through what a block device is stacked with. Writing a device writes
//! what it is stacked on — a loop device's backing device or file, a dm or md device's
//! components, a partition's disk — and so reaches whatever else is stacked on that: another
//! loop device over it or over the same file, a holder, a partition. A device is refused when
//! anything it reaches is mounted, swap, held or busy, and the refusal names the chain
//! (`/dev/loop5 -> /dev/loop3 (mounted on /mnt/x)`).
//!
//! Loop devices are followed by what the kernel says they are backed by (LOOP_GET_STATUS64: a
//! device number, or a file's device and inode), not by the path sysfs shows, which may be
//! stale or deleted. A loop device does not claim what it is backed by (no holder in sysfs, and
//! the kernel grants an exclusive open of it), which is why the guard must walk.

use crate::loopdev::Backing;
use crate::system::System;
use fsbench_measure::host::{parse_mountinfo, MountEntry};
use std::path::{Path, PathBuf};

/// How many devices deep the walk follows a stack before it refuses: the kernel keeps loop
/// devices from looping back on themselves, and this keeps anything else from going on for
/// ever.
pub const MAX_DEPTH: usize = 16;

/// A block device number (major, minor).
pub type DevNo = (u32, u32);

/// A block device as sysfs names it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Node {
    name: String,
    dev: DevNo,
}

impl Node {
    fn shown(&self) -> String {
        format!("/dev/{}", self.name)
    }
}

/// How a device is reached from the named one, which says what counts as using it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// All of it is written (the named device, a loop device's backing device) or shows what
    /// is written (a loop device over that): nothing else may use it or a partition of it,
    /// and the kernel must grant an exclusive open of each.
    Whole,
    /// A component of a dm or md device on the way: that device claims it, so the kernel's
    /// exclusive open is not asked; anything else holding or stacked on it is a user.
    Component,
    /// The disk of a partition on the way: only what uses the whole disk is a user (its other
    /// partitions are not written), and the partition's own claim would fail its exclusive
    /// open.
    Disk,
}

/// Why a device the walk reached may not be written. `name` is the device (or partition) in
/// use, as sysfs names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Use {
    /// Mounted on `/`.
    Root {
        name: String,
    },
    Mounted {
        name: String,
        at: PathBuf,
    },
    Swap {
        name: String,
    },
    /// Held by device mapper or md (`/sys/class/block/NAME/holders`).
    Held {
        name: String,
        by: String,
    },
    /// A member of a mounted btrfs (`/sys/fs/btrfs/UUID/devices`), with its other members.
    Btrfs {
        name: String,
        fs: String,
        others: Vec<String>,
    },
    /// The kernel refuses to open it exclusively.
    Busy {
        name: String,
    },
    /// It could not be opened to ask the kernel.
    Unopened {
        name: String,
        why: String,
    },
    /// What the loop device is backed by cannot be told.
    Unknown {
        name: String,
        why: String,
    },
    /// The stack goes deeper than [`MAX_DEPTH`].
    TooDeep,
}

/// A refusal: the chain from the named device to the one in use, and why it is in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InUse {
    chain: Chain,
    /// The sysfs name of the chain's last device (`why` may name a partition of it).
    last: String,
    pub why: Use,
}

impl InUse {
    /// The one-line refusal of the device the user named as `shown`: what is in use and what
    /// to do. The named device itself in use is said as it always was; a device reached
    /// through it is named by the chain.
    pub fn message(&self, shown: &str) -> String {
        if self.why == Use::TooDeep {
            return format!(
                "{shown} is stacked more than {MAX_DEPTH} devices deep ({} -> ...), deeper than \
                 fsbench follows to check what it reaches; name a device stacked less deeply",
                self.chain.text()
            );
        }
        if self.chain.0.len() == 1 {
            return direct(shown, &self.why);
        }
        let dev = |name: &str| format!("/dev/{name}");
        // A partition of the chain's last device is named; the device itself is "it".
        let on = |name: &str| {
            if name == self.last {
                String::new()
            } else {
                format!("{} ", dev(name))
            }
        };
        let (state, remedy) = match &self.why {
            Use::Root { name } => (
                format!("{}mounted on /, the root filesystem", on(name)),
                "never".to_string(),
            ),
            Use::Mounted { name, at } => (
                format!("{}mounted on {}", on(name), at.display()),
                format!("unmount {} first", dev(name)),
            ),
            Use::Swap { name } => (
                format!("{}in use as swap", on(name)),
                format!("swapoff {} first", dev(name)),
            ),
            Use::Held { name, by } => (
                format!("{}held by {by}", on(name)),
                format!("release {} first", dev(name)),
            ),
            Use::Btrfs { name, fs, .. } => (
                format!("{}a member of the mounted btrfs {fs}", on(name)),
                "unmount that btrfs first".to_string(),
            ),
            Use::Busy { name } => (
                format!(
                    "{}refused an exclusive open by the kernel: mounted, perhaps in another \
                     mount namespace, or held by another program",
                    on(name)
                ),
                format!("release {} first", dev(name)),
            ),
            Use::Unopened { name, why } => (
                format!("{}cannot be opened to check it is unused: {why}", on(name)),
                "name another device".to_string(),
            ),
            Use::Unknown { name, why } => (
                format!(
                    "{}is a loop device whose backing cannot be told: {why}",
                    on(name)
                ),
                "name another device".to_string(),
            ),
            Use::TooDeep => unreachable!("said above"),
        };
        format!(
            "{shown} is in use through what it is stacked with: {} ({state}); {remedy}",
            self.chain.text()
        )
    }
}

/// The named device itself in use, in the words the guard has always used.
fn direct(shown: &str, why: &Use) -> String {
    match why {
        Use::Root { name } => {
            format!("{shown} holds the root filesystem (/dev/{name} is mounted on /): never")
        }
        Use::Mounted { name, at } => format!(
            "{shown} is in use: /dev/{name} is mounted on {}; unmount it first",
            at.display()
        ),
        Use::Swap { name } => {
            format!("{shown} is in use as swap (/dev/{name}); swapoff it first")
        }
        Use::Held { name, by } => format!(
            "{shown} is in use: /dev/{name} is held by {by} (device mapper, LVM, RAID or \
             dm-crypt); release it first"
        ),
        Use::Btrfs { name, fs, others } => format!(
            "{shown} is in use: /dev/{name} is a member of the mounted btrfs {fs}{}; unmount it \
             first",
            if others.is_empty() {
                String::new()
            } else {
                format!(" (with {})", others.join(", "))
            }
        ),
        Use::Busy { name } => format!(
            "{shown} is in use: the kernel refuses to open /dev/{name} exclusively (mounted, \
             perhaps in another mount namespace, or held by another program; `grep -l \
             '/dev/{name} ' /proc/*/mountinfo` lists processes that see a mount of it); release \
             it first"
        ),
        Use::Unopened { why, .. } => {
            format!("{shown} cannot be opened to check it is unused: {why}")
        }
        Use::Unknown { why, .. } => {
            format!("{shown} is a loop device whose backing cannot be told: {why}")
        }
        Use::TooDeep => unreachable!("a device alone is not deep"),
    }
}

/// The way from the named device: its first label, then each step as ` -> X` (X is what the
/// one before is stacked on) or ` <- X` (X is stacked on the one before).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Chain(Vec<String>);

impl Chain {
    fn down(&self, label: String) -> Chain {
        let mut steps = self.0.clone();
        steps.push(format!(" -> {label}"));
        Chain(steps)
    }

    fn up(&self, label: String) -> Chain {
        let mut steps = self.0.clone();
        steps.push(format!(" <- {label}"));
        Chain(steps)
    }

    fn text(&self) -> String {
        self.0.concat()
    }
}

/// What writing the named device wholly writes: devices by number and files by device and
/// inode, each with the chain that reaches it. Two of an array's members that share any of it
/// are one storage written twice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Footprint {
    pub devices: Vec<(DevNo, String)>,
    pub files: Vec<((u64, u64), String)>,
}

impl Footprint {
    /// What `self` and `other` both write: the chains that reach it from each, or None.
    pub fn shared(&self, other: &Footprint) -> Option<(String, String)> {
        let devices = self.devices.iter().find_map(|(dev, chain)| {
            other
                .devices
                .iter()
                .find(|(theirs, _)| theirs == dev)
                .map(|(_, theirs)| (chain.clone(), theirs.clone()))
        });
        devices.or_else(|| {
            self.files.iter().find_map(|(id, chain)| {
                other
                    .files
                    .iter()
                    .find(|(theirs, _)| theirs == id)
                    .map(|(_, theirs)| (chain.clone(), theirs.clone()))
            })
        })
    }
}

/// An attached loop device and what it is backed by.
struct Loop {
    node: Node,
    backing: Result<Backing, String>,
    /// The backing file as sysfs names it, for messages.
    shown: String,
}

struct Walk<'a> {
    sys: &'a dyn System,
    mounts: Vec<MountEntry>,
    swaps: Vec<String>,
    /// Mounted btrfs filesystems and their members.
    btrfs: Vec<(String, Vec<String>)>,
    loops: Vec<Loop>,
    /// Devices already checked (or being checked): each is walked once, whatever way leads
    /// to it again.
    seen: Vec<Node>,
    seen_files: Vec<(u64, u64)>,
    footprint: Footprint,
}

/// Walks from the block device `device` (device number `number`), checking it and everything
/// writing it reaches; what it wholly writes, or the first thing in use.
pub fn walk(sys: &dyn System, device: &Path, number: DevNo) -> Result<Footprint, InUse> {
    let mut walk = Walk::new(sys);
    let name = walk.name_of(number).unwrap_or_else(|| {
        device
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let named = Node { name, dev: number };
    let chain = Chain(vec![device.display().to_string()]);
    walk.seen.push(named.clone());
    let family = walk.check(&named, Reach::Whole, &chain, device)?;
    walk.record(&family, &chain);
    walk.down(&named, &chain, false)?;
    Ok(walk.footprint)
}

impl Walk<'_> {
    fn new(sys: &dyn System) -> Walk<'_> {
        let mounts = parse_mountinfo(
            &sys.read_file(Path::new("/proc/self/mountinfo"))
                .unwrap_or_default(),
        );
        let swaps = sys
            .read_file(Path::new("/proc/swaps"))
            .unwrap_or_default()
            .lines()
            .skip(1)
            .filter_map(|line| line.split_whitespace().next())
            .filter_map(|swap| Path::new(swap).file_name())
            .map(|name| name.to_string_lossy().into_owned())
            .collect();
        // A mounted btrfs on several devices shows one of them in mountinfo; sysfs lists them
        // all.
        let btrfs = sys
            .list_dir(Path::new("/sys/fs/btrfs"))
            .unwrap_or_default()
            .into_iter()
            .map(|fs| {
                let members = sys
                    .list_dir(&PathBuf::from(format!("/sys/fs/btrfs/{fs}/devices")))
                    .unwrap_or_default();
                (fs, members)
            })
            .collect();
        let mut loops = Vec::new();
        for name in sys.list_dir(Path::new("/sys/block")).unwrap_or_default() {
            if !name.starts_with("loop") {
                continue;
            }
            // Only an attached loop device has a backing file.
            let Ok(shown) = sys.read_file(&PathBuf::from(format!(
                "/sys/block/{name}/loop/backing_file"
            ))) else {
                continue;
            };
            let Some(dev) = sys
                .read_file(&PathBuf::from(format!("/sys/block/{name}/dev")))
                .ok()
                .and_then(|text| parse_devno(&text))
            else {
                continue;
            };
            let backing = match sys.loop_backing(&PathBuf::from(format!("/dev/{name}"))) {
                Ok(Some(backing)) => Ok(backing),
                // Detached since sysfs was read.
                Ok(None) => continue,
                Err(e) => Err(e.to_string()),
            };
            loops.push(Loop {
                node: Node { name, dev },
                backing,
                shown: shown.trim_end_matches('\n').to_string(),
            });
        }
        Walk {
            sys,
            mounts,
            swaps,
            btrfs,
            loops,
            seen: Vec::new(),
            seen_files: Vec::new(),
            footprint: Footprint::default(),
        }
    }

    fn name_of(&self, dev: DevNo) -> Option<String> {
        self.sys
            .read_file(&PathBuf::from(format!(
                "/sys/dev/block/{}:{}/uevent",
                dev.0, dev.1
            )))
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("DEVNAME="))
            .map(str::to_string)
    }

    fn node_of_dev(&self, dev: DevNo) -> Node {
        Node {
            name: self
                .name_of(dev)
                .unwrap_or_else(|| format!("{}:{}", dev.0, dev.1)),
            dev,
        }
    }

    /// The device sysfs knows as `name` (a holder's or component's entry), if it exists.
    fn node_named(&self, name: &str) -> Option<Node> {
        let dev = self
            .sys
            .read_file(&PathBuf::from(format!("/sys/class/block/{name}/dev")))
            .ok()
            .and_then(|text| parse_devno(&text))?;
        Some(Node {
            name: name.to_string(),
            dev,
        })
    }

    fn is_seen(&self, dev: DevNo) -> bool {
        self.seen.iter().any(|n| n.dev == dev)
    }

    /// The device and its partitions.
    fn family(&self, node: &Node) -> Vec<Node> {
        let class = PathBuf::from(format!("/sys/class/block/{}", node.name));
        let mut family = vec![node.clone()];
        for entry in self.sys.list_dir(&class).unwrap_or_default() {
            if entry.starts_with(&node.name) && entry != node.name {
                if let Some(dev) = self
                    .sys
                    .read_file(&class.join(&entry).join("dev"))
                    .ok()
                    .and_then(|text| parse_devno(&text))
                {
                    family.push(Node { name: entry, dev });
                }
            }
        }
        family
    }

    /// What writing the named device wholly writes includes these: a device reached by
    /// `chain`, and its partitions.
    fn record(&mut self, family: &[Node], chain: &Chain) {
        let text = chain.text();
        for (i, member) in family.iter().enumerate() {
            let reached = if i == 0 {
                text.clone()
            } else {
                format!("{text} (its partition {})", member.shown())
            };
            self.footprint.devices.push((member.dev, reached));
        }
    }

    fn refuse(chain: &Chain, last: &Node, why: Use) -> InUse {
        InUse {
            chain: chain.clone(),
            last: last.name.clone(),
            why,
        }
    }

    /// Refuses `node` (reached by `chain`, opened as `path`) when it or what uses it is in
    /// use; the devices it stands for (itself, and its partitions unless it is a disk reached
    /// from one of them).
    fn check(
        &mut self,
        node: &Node,
        reach: Reach,
        chain: &Chain,
        path: &Path,
    ) -> Result<Vec<Node>, InUse> {
        let refuse = |why| Err(Self::refuse(chain, node, why));
        if chain.0.len() > MAX_DEPTH {
            return refuse(Use::TooDeep);
        }
        let family = if reach == Reach::Disk {
            vec![node.clone()]
        } else {
            self.family(node)
        };
        for mount in &self.mounts {
            let source_name = Path::new(&mount.source)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            let hit = family.iter().find(|member| {
                format!("{}:{}", member.dev.0, member.dev.1) == mount.device_number
                    || source_name.as_deref() == Some(member.name.as_str())
            });
            if let Some(member) = hit {
                let name = member.name.clone();
                if mount.mount_point == Path::new("/") {
                    return refuse(Use::Root { name });
                }
                return refuse(Use::Mounted {
                    name,
                    at: mount.mount_point.clone(),
                });
            }
        }
        if let Some(member) = family.iter().find(|m| self.swaps.contains(&m.name)) {
            return refuse(Use::Swap {
                name: member.name.clone(),
            });
        }
        for member in &family {
            let holders = self
                .sys
                .list_dir(&PathBuf::from(format!(
                    "/sys/class/block/{}/holders",
                    member.name
                )))
                .unwrap_or_default();
            // A holder the walk came down from (a dm or md device over its component) is not
            // another user.
            if let Some(holder) = holders
                .iter()
                .find(|h| !self.seen.iter().any(|n| &n.name == *h))
            {
                return refuse(Use::Held {
                    name: member.name.clone(),
                    by: holder.clone(),
                });
            }
        }
        for (fs, members) in &self.btrfs {
            if let Some(member) = family.iter().find(|m| members.contains(&m.name)) {
                return refuse(Use::Btrfs {
                    name: member.name.clone(),
                    fs: fs.clone(),
                    others: members
                        .iter()
                        .filter(|m| **m != member.name)
                        .map(|m| format!("/dev/{m}"))
                        .collect(),
                });
            }
        }
        // The kernel's own word: it refuses an exclusive open of a device that is mounted in
        // any mount namespace (which this process's mountinfo does not show) or held by
        // anything at all.
        if reach == Reach::Whole {
            for member in &family {
                let node_path = if member == node {
                    path.to_path_buf()
                } else {
                    PathBuf::from(member.shown())
                };
                match self.sys.open_exclusive(&node_path) {
                    Ok(()) => {}
                    Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                        return refuse(Use::Busy {
                            name: member.name.clone(),
                        })
                    }
                    // Not root (a dry run): the run itself, as root, asks.
                    Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM)) => {}
                    // A partition without a node of that name in /dev.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound && member != node => {}
                    Err(e) => {
                        return refuse(Use::Unopened {
                            name: member.name.clone(),
                            why: e.to_string(),
                        })
                    }
                }
            }
        }
        // Loop devices over any of them show what is written: each must be unused too.
        for member in &family {
            let over: Vec<Node> = self
                .loops
                .iter()
                .filter(|l| l.backing == Ok(Backing::Device(member.dev.0, member.dev.1)))
                .map(|l| l.node.clone())
                .filter(|n| !self.is_seen(n.dev))
                .collect();
            for user in over {
                self.seen.push(user.clone());
                let label = if member == node {
                    user.shown()
                } else {
                    format!("{} (over {})", user.shown(), member.shown())
                };
                self.check(
                    &user,
                    Reach::Whole,
                    &chain.up(label),
                    Path::new(&user.shown()),
                )?;
            }
        }
        Ok(family)
    }

    /// Follows what `node` is stacked on, checking each; `partial`: only part of `node` is
    /// written (below a partition's disk), so what is below is not recorded as written whole.
    fn down(&mut self, node: &Node, chain: &Chain, partial: bool) -> Result<(), InUse> {
        let backing = self
            .loops
            .iter()
            .find(|l| l.node.dev == node.dev)
            .map(|l| (l.backing.clone(), l.shown.clone()));
        match backing {
            Some((Err(why), _)) => {
                return Err(Self::refuse(
                    chain,
                    node,
                    Use::Unknown {
                        name: node.name.clone(),
                        why,
                    },
                ))
            }
            Some((Ok(Backing::Device(major, minor)), _)) if !self.is_seen((major, minor)) => {
                let below = self.node_of_dev((major, minor));
                self.seen.push(below.clone());
                let chain = chain.down(below.shown());
                let family = self.check(&below, Reach::Whole, &chain, Path::new(&below.shown()))?;
                if !partial {
                    self.record(&family, &chain);
                }
                self.down(&below, &chain, partial)?;
            }
            Some((Ok(Backing::File { device, inode }), shown))
                if !self.seen_files.contains(&(device, inode)) =>
            {
                self.seen_files.push((device, inode));
                let chain = chain.down(shown);
                if chain.0.len() > MAX_DEPTH {
                    return Err(Self::refuse(&chain, node, Use::TooDeep));
                }
                if !partial {
                    self.footprint.files.push(((device, inode), chain.text()));
                }
                // The file is the image of every loop device over it: each must be unused.
                let over: Vec<Node> = self
                    .loops
                    .iter()
                    .filter(|l| l.backing == Ok(Backing::File { device, inode }))
                    .map(|l| l.node.clone())
                    .filter(|n| !self.is_seen(n.dev))
                    .collect();
                for user in over {
                    self.seen.push(user.clone());
                    self.check(
                        &user,
                        Reach::Whole,
                        &chain.up(user.shown()),
                        Path::new(&user.shown()),
                    )?;
                }
            }
            // Not a loop device, or what it is backed by was walked already.
            _ => {}
        }
        // A dm or md device writes its components.
        let components = self
            .sys
            .list_dir(&PathBuf::from(format!(
                "/sys/class/block/{}/slaves",
                node.name
            )))
            .unwrap_or_default();
        for name in components {
            let Some(below) = self.node_named(&name) else {
                continue;
            };
            if self.is_seen(below.dev) {
                continue;
            }
            self.seen.push(below.clone());
            let chain = chain.down(below.shown());
            let family = self.check(&below, Reach::Component, &chain, Path::new(&below.shown()))?;
            if !partial {
                self.record(&family, &chain);
            }
            self.down(&below, &chain, partial)?;
        }
        // A partition writes part of its disk.
        let class = format!("/sys/class/block/{}", node.name);
        if self
            .sys
            .read_file(&PathBuf::from(format!("{class}/partition")))
            .is_ok()
        {
            // `..` of a partition's sysfs directory is its disk's.
            let disk = self
                .sys
                .read_file(&PathBuf::from(format!("{class}/../dev")))
                .ok()
                .and_then(|text| parse_devno(&text))
                .map(|dev| self.node_of_dev(dev));
            if let Some(disk) = disk.filter(|d| !self.is_seen(d.dev)) {
                self.seen.push(disk.clone());
                let chain = chain.down(disk.shown());
                self.check(&disk, Reach::Disk, &chain, Path::new(&disk.shown()))?;
                self.down(&disk, &chain, true)?;
            }
        }
        Ok(())
    }
}

/// `MAJOR:MINOR` as sysfs writes it.
fn parse_devno(text: &str) -> Option<DevNo> {
    let (major, minor) = text.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::RecordingSystem;

    /// A host whose root is on vda, with the given loop devices attached (name, number,
    /// backing, backing file as sysfs shows it).
    fn host(loops: &[(&str, DevNo, Backing, &str)]) -> RecordingSystem {
        let sys = RecordingSystem::new();
        sys.set_file(
            "/proc/self/mountinfo",
            "22 1 253:0 / / rw - ext4 /dev/vda rw\n",
        );
        sys.set_file("/proc/swaps", "Filename Type Size Used Priority\n");
        let names: Vec<&str> = loops.iter().map(|l| l.0).collect();
        sys.set_dir("/sys/block", &names);
        for (name, dev, backing, shown) in loops {
            block(&sys, name, *dev);
            sys.set_file(format!("/sys/block/{name}/dev"), &devno(*dev));
            sys.set_file(
                format!("/sys/block/{name}/loop/backing_file"),
                &format!("{shown}\n"),
            );
            sys.set_loop_backing(format!("/dev/{name}"), *backing);
        }
        sys
    }

    fn devno(dev: DevNo) -> String {
        format!("{}:{}\n", dev.0, dev.1)
    }

    /// A block device node and its sysfs entries.
    fn block(sys: &RecordingSystem, name: &str, dev: DevNo) {
        sys.set_block_device(format!("/dev/{name}"), dev.0, dev.1);
        sys.set_file(
            format!("/sys/dev/block/{}:{}/uevent", dev.0, dev.1),
            &format!("MAJOR={}\nMINOR={}\nDEVNAME={name}\n", dev.0, dev.1),
        );
        sys.set_file(format!("/sys/class/block/{name}/dev"), &devno(dev));
    }

    fn mount(sys: &RecordingSystem, dev: DevNo, name: &str, at: &str) {
        let now = sys.read_file(Path::new("/proc/self/mountinfo")).unwrap();
        sys.set_file(
            "/proc/self/mountinfo",
            &format!(
                "{now}40 22 {}:{} / {at} rw - ext4 /dev/{name} rw\n",
                dev.0, dev.1
            ),
        );
    }

    fn refusal(sys: &RecordingSystem, device: &str) -> String {
        let dev = sys.block_device_number(Path::new(device)).unwrap().unwrap();
        walk(sys, Path::new(device), dev)
            .expect_err("refused")
            .message(device)
    }

    fn file(inode: u64) -> Backing {
        Backing::File {
            device: 0x801,
            inode,
        }
    }

    /// A dm or md device writes its components: each is followed past the claim its holder
    /// has on it (neither that holder nor the kernel's refused exclusive open is another
    /// user), to what they are stacked on; a second holder is another user.
    #[test]
    fn the_components_of_a_dm_or_md_device_are_followed_past_their_claim() {
        let sys = host(&[
            ("loop3", (7, 3), file(12), "/img/a.img"),
            ("loop4", (7, 4), Backing::Device(7, 9), "/dev/loop9"),
            ("loop9", (7, 9), file(13), "/img/b.img"),
        ]);
        block(&sys, "dm-0", (253, 5));
        sys.set_block_device("/dev/mapper/stripe", 253, 5);
        sys.set_dir("/sys/class/block/dm-0/slaves", &["loop3", "loop4"]);
        for component in ["loop3", "loop4"] {
            sys.set_dir(format!("/sys/class/block/{component}/holders"), &["dm-0"]);
            sys.set_busy(format!("/dev/{component}"));
        }
        let dev = (253, 5);
        let footprint = walk(&sys, Path::new("/dev/mapper/stripe"), dev).unwrap();
        let written: Vec<DevNo> = footprint.devices.iter().map(|d| d.0).collect();
        assert_eq!(written, [(253, 5), (7, 3), (7, 4), (7, 9)]);
        assert_eq!(footprint.files.len(), 2);

        mount(&sys, (7, 9), "loop9", "/mnt/x");
        assert_eq!(
            refusal(&sys, "/dev/mapper/stripe"),
            "/dev/mapper/stripe is in use through what it is stacked with: /dev/mapper/stripe \
             -> /dev/loop4 -> /dev/loop9 (mounted on /mnt/x); unmount /dev/loop9 first"
        );
        let sys = host(&[("loop3", (7, 3), file(12), "/img/a.img")]);
        block(&sys, "md0", (9, 0));
        sys.set_dir("/sys/class/block/md0/slaves", &["loop3"]);
        sys.set_dir("/sys/class/block/loop3/holders", &["md0", "dm-1"]);
        let e = refusal(&sys, "/dev/md0");
        assert!(
            e.contains("/dev/md0 -> /dev/loop3 (held by dm-1); release /dev/loop3 first"),
            "{e}"
        );
    }

    /// A partition writes part of its disk: what uses the whole disk is in the way (a loop
    /// device over it, another over the disk's own image), its other partitions are not.
    #[test]
    fn a_partition_reaches_its_disk_but_not_the_disks_other_partitions() {
        let sys = host(&[("loop7", (7, 7), file(20), "/img/disk.img")]);
        block(&sys, "loop7p1", (259, 0));
        block(&sys, "loop7p2", (259, 1));
        sys.set_dir(
            "/sys/class/block/loop7",
            &["holders", "loop", "loop7p1", "loop7p2"],
        );
        sys.set_file("/sys/class/block/loop7p1/partition", "1\n");
        sys.set_file("/sys/class/block/loop7p1/../dev", "7:7\n");
        sys.set_file("/sys/class/block/loop7/loop7p2/dev", "259:1\n");
        sys.set_file("/sys/class/block/loop7/loop7p1/dev", "259:0\n");
        mount(&sys, (259, 1), "loop7p2", "/data");
        // The mounted partition claims the disk: its exclusive open fails, which is not asked.
        sys.set_busy("/dev/loop7");
        let footprint = walk(&sys, Path::new("/dev/loop7p1"), (259, 0)).unwrap();
        assert_eq!(footprint.devices, [((259, 0), "/dev/loop7p1".to_string())]);
        assert!(
            footprint.files.is_empty(),
            "only part of the image is written"
        );
        let e = refusal(&sys, "/dev/loop7");
        assert_eq!(
            e,
            "/dev/loop7 is in use: /dev/loop7p2 is mounted on /data; unmount it first"
        );

        let with = |loops: &[(&str, DevNo, Backing, &str)], at: &str| {
            let sys = host(loops);
            block(&sys, "loop7p1", (259, 0));
            sys.set_file("/sys/class/block/loop7p1/partition", "1\n");
            sys.set_file("/sys/class/block/loop7p1/../dev", "7:7\n");
            let last = loops.last().unwrap();
            mount(&sys, last.1, last.0, at);
            refusal(&sys, "/dev/loop7p1")
        };
        let disk = ("loop7", (7, 7), file(20), "/img/disk.img");
        let e = with(
            &[disk, ("loop9", (7, 9), Backing::Device(7, 7), "/dev/loop7")],
            "/y",
        );
        assert!(
            e.contains("/dev/loop7p1 -> /dev/loop7 <- /dev/loop9 (mounted on /y)"),
            "{e}"
        );
        let e = with(&[disk, ("loop8", (7, 8), file(20), "/img/disk.img")], "/z");
        assert!(
            e.contains("/dev/loop7p1 -> /dev/loop7 -> /img/disk.img <- /dev/loop8 (mounted on /z)"),
            "{e}"
        );
    }

    /// A loop device over a partition of the named disk shows part of what is written.
    #[test]
    fn a_loop_device_over_a_partition_of_the_named_disk_is_a_user() {
        let sys = host(&[("loop9", (7, 9), Backing::Device(253, 17), "/dev/vdb1")]);
        block(&sys, "vdb", (253, 16));
        sys.set_dir("/sys/class/block/vdb", &["holders", "vdb1"]);
        sys.set_file("/sys/class/block/vdb/vdb1/dev", "253:17\n");
        mount(&sys, (7, 9), "loop9", "/srv");
        assert_eq!(
            refusal(&sys, "/dev/vdb"),
            "/dev/vdb is in use through what it is stacked with: /dev/vdb <- /dev/loop9 (over \
             /dev/vdb1) (mounted on /srv); unmount /dev/loop9 first"
        );
    }

    /// A stack deeper than the bound is refused, not followed for ever; one that comes back
    /// to a device already seen ends there.
    #[test]
    fn a_stack_deeper_than_the_bound_is_refused_and_one_that_loops_ends() {
        let names: Vec<String> = (0..=MAX_DEPTH as u32 + 2)
            .map(|n| format!("loop{n}"))
            .collect();
        let loops: Vec<(&str, DevNo, Backing, &str)> = names
            .iter()
            .enumerate()
            .map(|(n, name)| {
                let n = n as u32;
                (
                    name.as_str(),
                    (7, n),
                    Backing::Device(7, n + 1),
                    "/dev/next",
                )
            })
            .collect();
        let sys = host(&loops);
        let e = refusal(&sys, "/dev/loop0");
        assert!(
            e.starts_with(
                "/dev/loop0 is stacked more than 16 devices deep (/dev/loop0 -> /dev/loop1 -> "
            ),
            "{e}"
        );
        assert!(e.ends_with("name a device stacked less deeply"), "{e}");

        let sys = host(&[
            ("loop0", (7, 0), Backing::Device(7, 1), "/dev/loop1"),
            ("loop1", (7, 1), Backing::Device(7, 0), "/dev/loop0"),
        ]);
        // Nothing is in use, and the walk ends.
        walk(&sys, Path::new("/dev/loop0"), (7, 0)).unwrap();
    }
}
