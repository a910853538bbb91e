//! Debian's kernel source as the tree the tasks untar and build (studies 000 and 001 untarred
//! a real kernel): found where a `linux-source-X.Y` package installs its tarball, and
//! recompressed once, untimed, to the format the study untarred (`tar xjf`: bzip2), kept in
//! the data directory under a name that says which file it was made from.

use super::tree::Compression;
use std::io;
use std::path::{Path, PathBuf};

/// Where Debian's `linux-source-X.Y` packages put their tarball.
pub const DIR: &str = "/usr/src";

/// The package this host's profiles were checked with (`scripts/install-deps.sh --studies`
/// installs it).
pub const PACKAGE: &str = "linux-source-6.1";

/// An installed kernel source tarball.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub path: PathBuf,
    /// `6.1`: what follows `linux-source-` in its name.
    pub version: String,
}

impl Installed {
    /// `linux-source-6.1`: its name without the archive's extension.
    pub fn name(&self) -> String {
        format!("linux-source-{}", self.version)
    }
}

/// The installed kernel source ([`find_in`] of [`DIR`]).
pub fn find() -> Option<Installed> {
    find_in(Path::new(DIR))
}

/// The newest `linux-source-VERSION.tar.xz` (or `.tar.bz2`, `.tar.gz`) regular file in `dir`,
/// versions compared number by number (6.12 is newer than 6.9); None when there is none.
pub fn find_in(dir: &Path) -> Option<Installed> {
    let mut found: Vec<(Vec<u64>, Installed)> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let version = name.strip_prefix("linux-source-").and_then(|rest| {
                [".tar.xz", ".tar.bz2", ".tar.gz"]
                    .iter()
                    .find_map(|ext| rest.strip_suffix(ext))
            })?;
            let numbers = version
                .split(['.', '-', '+', '~'])
                .map(|part| part.parse::<u64>().ok())
                .collect::<Option<Vec<u64>>>()?;
            // A file, as stat(2) sees it (the package's own is one).
            if !std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file()) {
                return None;
            }
            Some((
                numbers,
                Installed {
                    path: entry.path(),
                    version: version.to_string(),
                },
            ))
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found.pop().map(|(_, installed)| installed)
}

/// The name of `source` recompressed to `to` in the data directory: the source's name, size
/// and modification time, so that another version of the package makes another file and a
/// file of that name was made from exactly this one.
pub fn cache_name(source: &Path, to: Compression) -> io::Result<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(source)?;
    let name = source
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let stem = Compression::ALL
        .iter()
        .find_map(|c| name.strip_suffix(&format!(".{}", c.extension())))
        .unwrap_or(&name)
        .to_string();
    Ok(format!(
        "fsbench-{stem}-{}b-{}s.{}",
        meta.len(),
        meta.mtime(),
        to.extension()
    ))
}

/// `source` (compressed as `from`) recompressed to `to` in `data`, made once
/// ([`crate::fileio::create_once`], under [`cache_name`]) and reused by every later run; the
/// source itself when it is in that format already. Returns the path and whether it was made
/// now.
pub fn recompressed(
    source: &Path,
    from: Compression,
    to: Compression,
    data: &Path,
) -> io::Result<(PathBuf, bool)> {
    if from == to {
        return Ok((source.to_path_buf(), false));
    }
    let path = data.join(cache_name(source, to)?);
    let made = crate::fileio::create_once(&path, |file| {
        let input = super::open_tarball(source, true)?;
        let mut tar = from.reader(io::BufReader::with_capacity(1 << 20, input));
        super::tree::encode(to, io::BufWriter::with_capacity(1 << 20, file), |out| {
            io::copy(&mut tar, out).map(drop)
        })
    })?;
    Ok((path, made))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// The detection logic on a directory laid out as /usr/src can be: the newest version
    /// by number, only tarballs of that name, only files.
    #[test]
    fn the_newest_kernel_source_tarball_is_found_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(find_in(d), None);
        assert_eq!(find_in(&d.join("missing")), None);
        // Debian's unpacked config directory, a stray file, a directory with the name.
        std::fs::create_dir(d.join("linux-config-6.1")).unwrap();
        std::fs::write(d.join("linux-headers-6.1.tar.xz"), b"x").unwrap();
        std::fs::create_dir(d.join("linux-source-7.0.tar.xz")).unwrap();
        std::fs::write(d.join("linux-source-6.1.tar"), b"x").unwrap();
        assert_eq!(find_in(d), None);
        std::fs::write(d.join("linux-source-6.1.tar.xz"), b"x").unwrap();
        let found = find_in(d).unwrap();
        assert_eq!(found.path, d.join("linux-source-6.1.tar.xz"));
        assert_eq!(
            (found.version.as_str(), found.name()),
            ("6.1", "linux-source-6.1".into())
        );
        // 6.12 is newer than 6.9 and 6.1 (not by the letters).
        std::fs::write(d.join("linux-source-6.9.tar.xz"), b"x").unwrap();
        std::fs::write(d.join("linux-source-6.12.tar.bz2"), b"x").unwrap();
        assert_eq!(find_in(d).unwrap().version, "6.12");
        // A symlink to a tarball counts as the tarball (stat), a dangling one does not.
        std::os::unix::fs::symlink("nowhere", d.join("linux-source-9.0.tar.xz")).unwrap();
        assert_eq!(find_in(d).unwrap().version, "6.12");
    }

    fn xz_tarball(dir: &Path) -> (PathBuf, Vec<u8>) {
        let mut tar = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_mode(0o644);
        h.set_size(5);
        tar.append_data(&mut h, "linux-source-6.1/Makefile", &b"all:\n"[..])
            .unwrap();
        let plain = tar.into_inner().unwrap();
        let path = dir.join("linux-source-6.1.tar.xz");
        let mut e = liblzma::write::XzEncoder::new(Vec::new(), 1);
        e.write_all(&plain).unwrap();
        std::fs::write(&path, e.finish().unwrap()).unwrap();
        (path, plain)
    }

    /// Recompressed once under a name saying which source it was made from; reused after
    /// (the same file, not rewritten); a symlink at that name is replaced, not written
    /// through; the same format is the source itself.
    #[test]
    fn the_recompressed_tarball_is_made_once_and_reused() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let (source, plain) = xz_tarball(dir.path());
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let (path, made) =
            recompressed(&source, Compression::Xz, Compression::Bzip2, &data).unwrap();
        assert!(made);
        let size = std::fs::metadata(&source).unwrap().len();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with(&format!("fsbench-linux-source-6.1-{size}b-"))
                && name.ends_with("s.tar.bz2"),
            "{name}"
        );
        let mut back = Vec::new();
        bzip2::read::BzDecoder::new(std::fs::File::open(&path).unwrap())
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, plain);
        let inode = std::fs::metadata(&path).unwrap().ino();
        let (again, made) =
            recompressed(&source, Compression::Xz, Compression::Bzip2, &data).unwrap();
        assert_eq!((again.as_path(), made), (path.as_path(), false));
        assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode);
        // Only the file itself is in the data directory (no partial file left).
        assert_eq!(std::fs::read_dir(&data).unwrap().count(), 1);
        // A symlink planted at the name is replaced by a file; its target is untouched.
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"sentinel").unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        let (_, made) = recompressed(&source, Compression::Xz, Compression::Bzip2, &data).unwrap();
        assert!(made);
        assert!(std::fs::symlink_metadata(&path).unwrap().is_file());
        assert_eq!(std::fs::read(&victim).unwrap(), b"sentinel");
        // Already in the format asked for: the source, nothing made.
        let (same, made) = recompressed(&source, Compression::Xz, Compression::Xz, &data).unwrap();
        assert_eq!((same, made), (source, false));
    }
}
