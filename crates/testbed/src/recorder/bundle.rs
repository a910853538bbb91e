//! A crash bundle: one power cut kept in a directory of its own, for a developer to replay any
//! of its crash states to an image and mount it (issue 40) — the image the log started from
//! (sparse), the log's records and its bytes, and a versioned manifest (`bundle.json`) with the
//! filesystem, its options, the budget and every state (docs/recording-device.md).
//!
//! [`Bundle::save`] writes one into a new directory (never through a symlink, nothing
//! overwritten; the manifest last, so a bundle without it is incomplete); [`Bundle::open`]
//! checks every part before anything is made of it; [`Bundle::materialise`] makes one state's
//! image with [`Builder`], as the power cut made it.

use super::log::{Log, Record};
use super::states::{Budget, Builder, State};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// What the manifest's `format` says: the bundle's magic.
pub const FORMAT: &str = "fsbench crash bundle";
/// The manifest's format version this fsbench writes and reads.
pub const VERSION: u32 = 1;
/// The manifest, written last.
pub const MANIFEST: &str = "bundle.json";
/// The image as it was when the log started (sparse).
pub const START: &str = "start.img";
/// The log's records ([`Log::save`]'s format).
pub const LOG: &str = "log";
/// The log's bytes: what its writes' records point at.
pub const DATA: &str = "log.data";

/// `bundle.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The fsbench that wrote it.
    pub fsbench: String,
    /// The filesystem (`ext4`), as fsbench names it.
    pub filesystem: String,
    /// The mkfs options, fsbench's defaults then the user's.
    pub mkfs_options: Vec<String>,
    /// mkfs as it ran (None: the filesystem was not made by mkfs, an aged image's copy).
    pub mkfs_command: Option<String>,
    /// The mount options the filesystem and every crash state were mounted with.
    pub mount_options: Option<String>,
    /// The image's size: the device's.
    pub image_bytes: u64,
    /// Which crash states were listed.
    pub budget: Budget,
    /// How many records the log holds.
    pub records: u64,
    /// Every crash state of the cut, in the order the power cut listed (and checked) them.
    pub states: Vec<StateRecord>,
}

/// One crash state in the manifest: [`State`] with its index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateRecord {
    /// Its place in the power cut's list: what `crash_state(index)` made.
    pub index: usize,
    /// "after flush 3 and 2 of its 5 next writes".
    pub what: String,
    /// Records `[0, upto)` applied whole.
    pub upto: usize,
    /// Writes and discards after `upto` applied too, by record index, in log order.
    pub extra: Vec<usize>,
    /// The workload's last mark before the state's next flush (None: no mark yet).
    pub promised: Option<u64>,
}

impl Manifest {
    /// The manifest of a cut of `filesystem` listing `states` of a log of `records` records.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        filesystem: &str,
        mkfs_options: Vec<String>,
        mkfs_command: Option<String>,
        mount_options: Option<String>,
        image_bytes: u64,
        budget: Budget,
        records: usize,
        states: &[State],
    ) -> Manifest {
        Manifest {
            format: FORMAT.into(),
            version: VERSION,
            fsbench: env!("CARGO_PKG_VERSION").into(),
            filesystem: filesystem.into(),
            mkfs_options,
            mkfs_command,
            mount_options,
            image_bytes,
            budget,
            records: records as u64,
            states: states
                .iter()
                .enumerate()
                .map(|(index, s)| StateRecord {
                    index,
                    what: s.what.clone(),
                    upto: s.upto,
                    extra: s.extra.clone(),
                    promised: s.promised,
                })
                .collect(),
        }
    }
}

/// Why a bundle cannot be opened, or a state not made of it.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// The directory is not a whole, consistent crash bundle of this fsbench.
    #[error("{}: not a crash bundle this fsbench can replay: {why}", dir.display())]
    Invalid { dir: PathBuf, why: String },
    /// No such state in the bundle.
    #[error("no crash state {index} in {}: it has {count} (0 to {})", dir.display(), count.saturating_sub(1))]
    NoState {
        dir: PathBuf,
        index: usize,
        count: usize,
    },
    /// Something is at the image's path already: it is never overwritten.
    #[error("{} exists: the state's image is only written to a new file", path.display())]
    Exists { path: PathBuf },
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
}

/// A crash bundle, opened and checked.
#[derive(Debug)]
pub struct Bundle {
    dir: PathBuf,
    manifest: Manifest,
    log: Log,
}

/// A new file at `path`, for writing: never through a symlink, never over anything.
fn new_file(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// A part of a bundle opened to read: never through a symlink.
fn open_part(path: &Path) -> io::Result<File> {
    let file = crate::copy::open_no_follow(path)?;
    Ok(file)
}

impl Bundle {
    /// Writes a bundle into the new directory `dir` (refused when anything is there): the
    /// image at `start` copied sparse, `log`'s records and its bytes, and `manifest` last.
    /// On an error nothing of it is left.
    pub fn save(dir: &Path, manifest: &Manifest, start: &Path, log: &Log) -> io::Result<()> {
        std::fs::DirBuilder::new().mode(0o700).create(dir)?;
        let made = (|| -> io::Result<()> {
            crate::copy::copy_image(start, &dir.join(START))?;
            let records = new_file(&dir.join(LOG))?;
            (&records).write_all(&log.encode())?;
            records.sync_all()?;
            let data = new_file(&dir.join(DATA))?;
            log.copy_data(&data)?;
            data.sync_all()?;
            let json = serde_json::to_vec_pretty(manifest).map_err(io::Error::other)?;
            let file = new_file(&dir.join(MANIFEST))?;
            (&file).write_all(&json)?;
            (&file).write_all(b"\n")?;
            file.sync_all()?;
            File::open(dir)?.sync_all()
        })();
        if made.is_err() {
            for part in [MANIFEST, DATA, LOG, START] {
                let _ = std::fs::remove_file(dir.join(part));
            }
            let _ = std::fs::remove_dir(dir);
        }
        made
    }

    /// The bundle in `dir`, every part checked: the manifest's format and version, the start
    /// image's size, the log (its magic, length, records and bytes), and each state (its
    /// index, a start just past a flush, extra records that are writes or discards after it,
    /// in the log and in order).
    pub fn open(dir: &Path) -> Result<Bundle, BundleError> {
        let invalid = |why: String| BundleError::Invalid {
            dir: dir.to_path_buf(),
            why,
        };
        let meta = std::fs::metadata(dir).map_err(|source| BundleError::Io {
            action: "open the crash bundle",
            path: dir.to_path_buf(),
            source,
        })?;
        if !meta.is_dir() {
            return Err(invalid("not a directory".into()));
        }
        // A part missing is the bundle's fault; another error is the host's.
        let part = |name: &str| {
            let path = dir.join(name);
            open_part(&path).map_err(|source| match source.kind() {
                io::ErrorKind::NotFound => invalid(format!("it has no {name}")),
                _ => BundleError::Io {
                    action: "read",
                    path,
                    source,
                },
            })
        };
        let read = |name: &str, mut file: File| {
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)
                .map_err(|source| BundleError::Io {
                    action: "read",
                    path: dir.join(name),
                    source,
                })
                .map(|_| bytes)
        };
        let text = read(MANIFEST, part(MANIFEST)?)?;
        let value: serde_json::Value = serde_json::from_slice(&text)
            .map_err(|e| invalid(format!("{MANIFEST} is not JSON: {e}")))?;
        if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            return Err(invalid(format!(
                "{MANIFEST} does not say it is an \"{FORMAT}\" (its \"format\")"
            )));
        }
        match value.get("version").and_then(|v| v.as_u64()) {
            Some(v) if v == u64::from(VERSION) => {}
            Some(v) => {
                return Err(invalid(format!(
                    "its format version is {v}; this fsbench reads version {VERSION}"
                )))
            }
            None => return Err(invalid(format!("{MANIFEST} has no format version"))),
        }
        let manifest: Manifest =
            serde_json::from_value(value).map_err(|e| invalid(format!("{MANIFEST}: {e}")))?;

        let start = part(START)?;
        let start_bytes = start
            .metadata()
            .map_err(|source| BundleError::Io {
                action: "read",
                path: dir.join(START),
                source,
            })?
            .len();
        if start_bytes != manifest.image_bytes {
            return Err(invalid(format!(
                "{START} is {start_bytes} bytes, the manifest says the image is {}",
                manifest.image_bytes
            )));
        }

        let records = read(LOG, part(LOG)?)?;
        let log = Log::decode(&dir.join(LOG), &records, part(DATA)?)
            .map_err(|e| invalid(e.to_string()))?;
        let n = log.records.len();
        if n as u64 != manifest.records {
            return Err(invalid(format!(
                "its log has {n} records, the manifest says {} (a truncated log?)",
                manifest.records
            )));
        }
        for (i, r) in log.records.iter().enumerate() {
            let (offset, len) = match *r {
                Record::Write { offset, len, .. } | Record::Discard { offset, len } => {
                    (offset, len)
                }
                Record::Flush | Record::Mark(_) => continue,
            };
            if offset
                .checked_add(len)
                .is_none_or(|end| end > manifest.image_bytes)
            {
                return Err(invalid(format!(
                    "record {i} of its log reaches past the image's end ({} bytes)",
                    manifest.image_bytes
                )));
            }
        }
        for (k, s) in manifest.states.iter().enumerate() {
            let state = format!("state {k} (\"{}\")", s.what);
            if s.index != k {
                return Err(invalid(format!("{state} says it is state {}", s.index)));
            }
            if s.upto > n {
                return Err(invalid(format!(
                    "{state} starts at record {}, past the log's end ({n} records)",
                    s.upto
                )));
            }
            if s.upto > 0 && log.records[s.upto - 1] != Record::Flush {
                return Err(invalid(format!(
                    "{state} starts at record {}, not just past a flush",
                    s.upto
                )));
            }
            let mut last = None;
            for &e in &s.extra {
                if e >= n {
                    return Err(invalid(format!(
                        "{state} applies record {e}, past the log's end ({n} records)"
                    )));
                }
                if !log.records[e].changes() {
                    return Err(invalid(format!(
                        "{state} applies record {e}, which is not a write or a discard ({:?})",
                        log.records[e]
                    )));
                }
                if e < s.upto || last.is_some_and(|l| e <= l) {
                    return Err(invalid(format!(
                        "{state} applies record {e} out of log order"
                    )));
                }
                last = Some(e);
            }
        }
        Ok(Bundle {
            dir: dir.to_path_buf(),
            manifest,
            log,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The log the states are made of.
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// The states, as [`super::states::states`] listed them for the cut.
    pub fn states(&self) -> Vec<State> {
        self.manifest
            .states
            .iter()
            .map(|s| State {
                upto: s.upto,
                extra: s.extra.clone(),
                promised: s.promised,
                what: s.what.clone(),
            })
            .collect()
    }

    /// Crash state `index`'s image at `out`, a new file (sparse, or a reflink of the start
    /// image's copy), made as the power cut made it: the start image advanced to the state's
    /// flush, with its extra writes. A working copy beside `out` is removed again.
    pub fn materialise(&self, index: usize, out: &Path) -> Result<(), BundleError> {
        let state = self
            .states()
            .into_iter()
            .nth(index)
            .ok_or_else(|| BundleError::NoState {
                dir: self.dir.clone(),
                index,
                count: self.manifest.states.len(),
            })?;
        if std::fs::symlink_metadata(out).is_ok() {
            return Err(BundleError::Exists {
                path: out.to_path_buf(),
            });
        }
        let name = out
            .file_name()
            .ok_or_else(|| BundleError::Io {
                action: "write the state's image to",
                path: out.to_path_buf(),
                source: io::Error::new(io::ErrorKind::InvalidInput, "not a file name"),
            })?
            .to_string_lossy();
        let working =
            out.with_file_name(format!(".{name}.working-{}", crate::target::unguessable()));
        let io = |action: &'static str, path: &Path| {
            let path = path.to_path_buf();
            move |source: io::Error| match source.kind() {
                io::ErrorKind::AlreadyExists => BundleError::Exists { path: path.clone() },
                _ => BundleError::Io {
                    action,
                    path,
                    source,
                },
            }
        };
        let log = self
            .log
            .try_clone()
            .map_err(io("read", &self.dir.join(DATA)))?;
        let mut builder = Builder::new(log, &self.dir.join(START), &working)
            .map_err(io("copy the start image to", &working))?;
        builder
            .make(&state, out)
            .map_err(io("write the state's image to", out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    const SIZE: u64 = 64 << 10;

    /// A bundle of a small log over a 64 KiB image: two writes, a flush, a mark, a write, a
    /// discard, a flush, a mark, a write; `dir` its directory.
    fn bundle(dir: &Path) -> (PathBuf, Manifest) {
        let start = dir.join("start-src.img");
        let image = File::create(&start).unwrap();
        image.set_len(SIZE).unwrap();
        image.write_all_at(&[1u8; 4096], 0).unwrap();
        let mut log = Log::create(&dir.join("data-src")).unwrap();
        log.write(4096, &[2u8; 4096]).unwrap();
        log.write(8192, &[3u8; 4096]).unwrap();
        log.flush();
        log.mark(1);
        log.write(12288, &[4u8; 4096]).unwrap();
        log.discard(0, 4096);
        log.flush();
        log.mark(2);
        log.write(16384, &[5u8; 512]).unwrap();
        let budget = Budget::default();
        let states = super::super::states::states(&log.records, budget);
        let manifest = Manifest::new(
            "ext4",
            vec!["-b".into(), "4096".into()],
            Some("mkfs.ext4 -b 4096 /dev/loop9".into()),
            Some("noatime".into()),
            SIZE,
            budget,
            log.records.len(),
            &states,
        );
        let out = dir.join("bundle");
        Bundle::save(&out, &manifest, &start, &log).unwrap();
        (out, manifest)
    }

    fn read(path: &Path) -> Vec<u8> {
        std::fs::read(path).unwrap()
    }

    fn rewrite_manifest(dir: &Path, change: impl FnOnce(&mut serde_json::Value)) {
        let path = dir.join(MANIFEST);
        let mut value: serde_json::Value = serde_json::from_slice(&read(&path)).unwrap();
        change(&mut value);
        std::fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
    }

    fn why(dir: &Path) -> String {
        Bundle::open(dir).unwrap_err().to_string()
    }

    /// Saved and opened back the same; every state made from the bundle is byte for byte the
    /// state [`Builder`] makes from the original log; an image in the way and a state past the
    /// list are refused; a second bundle at the same path is refused.
    #[test]
    fn a_bundle_replays_each_state_as_the_builder_made_it() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let (dir, manifest) = bundle(d);
        let opened = Bundle::open(&dir).unwrap();
        assert_eq!(opened.manifest(), &manifest);
        assert_eq!(opened.log().records.len(), 9);
        assert!(opened.states().len() >= 3);

        let original = Log::load(&dir.join(LOG), &d.join("data-src")).unwrap();
        let mut builder = Builder::new(original, &d.join("start-src.img"), &d.join("w")).unwrap();
        for (i, state) in opened.states().iter().enumerate() {
            let want = d.join(format!("want-{i}.img"));
            builder.make(state, &want).unwrap();
            let got = d.join(format!("got-{i}.img"));
            opened.materialise(i, &got).unwrap();
            assert_eq!(read(&got), read(&want), "{}", state.what);
            assert_eq!(std::fs::metadata(&got).unwrap().len(), SIZE);
        }
        // The last state: after the second flush, and its one write.
        let last = opened.states().len() - 1;
        let image = read(&d.join(format!("got-{last}.img")));
        assert!(image[..4096].iter().all(|&b| b == 0), "discarded");
        assert!(image[12288..16384].iter().all(|&b| b == 4));
        assert!(image[16384..16896].iter().all(|&b| b == 5));
        let leftovers: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains("working"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");

        let err = opened.materialise(0, &d.join("got-0.img")).unwrap_err();
        assert!(matches!(err, BundleError::Exists { .. }), "{err}");
        let err = opened.materialise(99, &d.join("x.img")).unwrap_err();
        assert!(err.to_string().contains("no crash state 99"), "{err}");
        assert!(!d.join("x.img").exists());

        let log = Log::load(&dir.join(LOG), &dir.join(DATA)).unwrap();
        let again = Bundle::save(&dir, &manifest, &d.join("start-src.img"), &log);
        assert_eq!(again.unwrap_err().kind(), io::ErrorKind::AlreadyExists);
    }

    /// Every part missing, a wrong format or version, a truncated log or data file, a start
    /// image of another size, a state out of the log or applying a flush, a part that is a
    /// symlink: each refused, saying so.
    #[test]
    fn a_bundle_that_is_not_whole_is_refused_with_its_reason() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let fresh = |name: &str| {
            let sub = d.join(name);
            std::fs::create_dir(&sub).unwrap();
            bundle(&sub).0
        };

        for part in [MANIFEST, START, LOG, DATA] {
            let dir = fresh(&format!("no-{part}"));
            std::fs::remove_file(dir.join(part)).unwrap();
            let why = why(&dir);
            assert!(why.contains(&format!("it has no {part}")), "{why}");
        }
        let why_missing = Bundle::open(&d.join("nothing")).unwrap_err().to_string();
        assert!(
            why_missing.contains("cannot open the crash bundle"),
            "{why_missing}"
        );

        let dir = fresh("format");
        rewrite_manifest(&dir, |v| v["format"] = "something else".into());
        assert!(why(&dir).contains("does not say it is an \"fsbench crash bundle\""));

        let dir = fresh("version");
        rewrite_manifest(&dir, |v| v["version"] = 2.into());
        let w = why(&dir);
        assert!(
            w.contains("format version is 2; this fsbench reads version 1"),
            "{w}"
        );

        let dir = fresh("not-json");
        std::fs::write(dir.join(MANIFEST), b"{").unwrap();
        assert!(why(&dir).contains("is not JSON"));

        let dir = fresh("truncated-log");
        let bytes = read(&dir.join(LOG));
        std::fs::write(dir.join(LOG), &bytes[..bytes.len() - 32]).unwrap();
        let w = why(&dir);
        assert!(w.contains("its length is not that of its records"), "{w}");

        let dir = fresh("fewer-records");
        let mut bytes = read(&dir.join(LOG));
        bytes.truncate(bytes.len() - 32);
        bytes[8..16].copy_from_slice(&8u64.to_le_bytes());
        std::fs::write(dir.join(LOG), &bytes).unwrap();
        let w = why(&dir);
        assert!(
            w.contains("its log has 8 records, the manifest says 9"),
            "{w}"
        );

        let dir = fresh("bad-magic");
        let mut bytes = read(&dir.join(LOG));
        bytes[0] = b'x';
        std::fs::write(dir.join(LOG), &bytes).unwrap();
        assert!(why(&dir).contains("not a write log"));

        let dir = fresh("truncated-data");
        let data = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join(DATA))
            .unwrap();
        data.set_len(4096).unwrap();
        let w = why(&dir);
        assert!(w.contains("past the end of the data file"), "{w}");

        let dir = fresh("image-size");
        rewrite_manifest(&dir, |v| v["image_bytes"] = 8192.into());
        let w = why(&dir);
        assert!(w.contains("start.img is 65536 bytes"), "{w}");

        let dir = fresh("extra-past");
        rewrite_manifest(&dir, |v| {
            let extra = &mut v["states"][1]["extra"];
            *extra = serde_json::json!([40]);
        });
        let w = why(&dir);
        assert!(
            w.contains("state 1") && w.contains("applies record 40, past the log's end"),
            "{w}"
        );

        let dir = fresh("extra-flush");
        rewrite_manifest(&dir, |v| v["states"][1]["extra"] = serde_json::json!([2]));
        let w = why(&dir);
        assert!(w.contains("not a write or a discard"), "{w}");

        let dir = fresh("upto-past");
        rewrite_manifest(&dir, |v| v["states"][0]["upto"] = 50.into());
        let w = why(&dir);
        assert!(w.contains("past the log's end"), "{w}");

        let dir = fresh("upto-not-flush");
        rewrite_manifest(&dir, |v| v["states"][0]["upto"] = 2.into());
        let w = why(&dir);
        assert!(w.contains("not just past a flush"), "{w}");

        let dir = fresh("index");
        rewrite_manifest(&dir, |v| v["states"][2]["index"] = 7.into());
        let w = why(&dir);
        assert!(
            w.contains("state 2") && w.contains("says it is state 7"),
            "{w}"
        );

        let dir = fresh("symlinked-log");
        std::fs::remove_file(dir.join(LOG)).unwrap();
        std::os::unix::fs::symlink(d.join("format").join(LOG), dir.join(LOG)).unwrap();
        assert!(
            Bundle::open(&dir).is_err(),
            "a part is never read through a symlink"
        );
    }
}
