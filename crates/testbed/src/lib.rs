//! The target layer: the system under test. It prepares a filesystem on a device (a sparse
//! image on a loop device by default, a guarded real block device on request, or memory for
//! tmpfs), mounts it with the requested options, sets the I/O scheduler and cache state, reads
//! everything back, and takes it all down again, fsck included, leaving nothing behind.
//!
//! Brief overview:
//! - [`system`]: the one seam to the host ([`System`]); [`RealSystem`] acts,
//!   [`RecordingSystem`] records for order-of-operations tests.
//! - [`fs`]: one module per filesystem behind the [`fs::Filesystem`] trait, and the support check.
//! - [`device`]: images and real devices, with the safety checks for the latter (and
//!   [`stack`]: everything writing a device reaches); [`array`]: several of them as one
//!   target (md under any filesystem, or the filesystem's own).
//! - [`target`]: [`Target::prepare`] and [`Target::finish`], the lifecycle.
//! - [`ledger`]: what was made, persisted so `fsbench cleanup` can undo a killed run;
//!   [`undo`]: undoing it (above every resource's module), on teardown and for `fsbench
//!   cleanup`; [`guard`]: a process that does so by itself when its parent is killed.
//! - [`cgroup`]: the processes of one sample, kept together so they end together (a cgroup,
//!   with a platform's CPU quota); [`scratch`]: a sample's own directory in a user's one.
//! - [`aging`]: a filesystem aged to a fill level and fragmentation; [`images`]: the aged
//!   image made once per configuration and copied for each sample.
//! - [`recorder`]: the recording device — an image served through FUSE under a loop device,
//!   every write and flush logged — and the crash states made from its log (durability).
//! - [`scheduler`], [`cache`], [`disk`]: the pieces; [`loopdev`] (loop ioctls), [`copy`] (an
//!   image copied sparse or by reflink) and `pagecache` (eviction, residency): what
//!   [`RealSystem`] does by system call, below [`system`], importing nothing of the crate.

pub mod aging;
pub mod array;
pub mod cache;
pub mod cgroup;
pub mod copy;
pub mod device;
pub mod disk;
pub mod error;
pub mod fs;
pub mod guard;
pub mod images;
pub mod ledger;
pub mod loopdev;
mod pagecache;
pub mod recorder;
pub mod scheduler;
pub mod scratch;
pub mod stack;
pub mod system;
pub mod target;
pub mod undo;

pub use cache::CachePolicy;
pub use device::DeviceSpec;
pub use error::TargetError;
pub use system::{RealSystem, RecordingSystem, System};
pub use target::{CutDone, Target, TargetInfo, TargetSpec};
