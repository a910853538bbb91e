//! Paths in a trace: relative to the recorded root, `/`-separated, no `.` or `..` components,
//! no empty ones; "." is the root itself. [`relative`] makes them from what the recorder
//! resolved; [`check`] is what a replay asks before it touches anything, so that no trace names
//! a place outside its root.

use std::path::{Component, Path};

/// The root-relative form of `absolute` (already made absolute by the recorder from the
/// process's working directory or `*at` directory), resolving `.` and `..` lexically; `None`
/// when it lies outside `root`.
pub fn relative(root: &Path, absolute: &Path) -> Option<String> {
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for component in absolute.components() {
        match component {
            Component::RootDir | Component::Prefix(_) => parts.clear(),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop();
            }
            Component::Normal(name) => parts.push(name),
        }
    }
    let mut root_parts = Vec::new();
    for component in root.components() {
        match component {
            Component::Normal(name) => root_parts.push(name),
            Component::ParentDir => {
                root_parts.pop();
            }
            _ => {}
        }
    }
    if parts.len() < root_parts.len() || parts[..root_parts.len()] != root_parts[..] {
        return None;
    }
    let rest = &parts[root_parts.len()..];
    if rest.is_empty() {
        return Some(".".into());
    }
    let names: Option<Vec<&str>> = rest.iter().map(|p| p.to_str()).collect();
    Some(names?.join("/"))
}

/// Why a path in a trace is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("{0:?} is absolute: a trace's paths are relative to its root")]
    Absolute(String),
    #[error("{0:?} climbs out of the root with `..`")]
    Escapes(String),
    #[error("{0:?} has an empty, `.` or NUL component")]
    Malformed(String),
}

/// Checks a trace path: relative, no `..`, `.` only alone, no empty components or NUL.
pub fn check(path: &str) -> Result<(), PathError> {
    if path == "." {
        return Ok(());
    }
    if path.starts_with('/') {
        return Err(PathError::Absolute(path.into()));
    }
    if path.contains('\0') {
        return Err(PathError::Malformed(path.into()));
    }
    for part in path.split('/') {
        match part {
            ".." => return Err(PathError::Escapes(path.into())),
            "" | "." => return Err(PathError::Malformed(path.into())),
            _ => {}
        }
    }
    Ok(())
}

/// The directory holding `path` ("." for a name at the root, and for the root itself).
pub fn parent(path: &str) -> &str {
    match path.rsplit_once('/') {
        Some((dir, _)) => dir,
        None => ".",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_made_relative_to_the_root_or_refused_outside_it() {
        let root = Path::new("/srv/app");
        assert_eq!(
            relative(root, Path::new("/srv/app/a/b")).as_deref(),
            Some("a/b")
        );
        assert_eq!(relative(root, Path::new("/srv/app")).as_deref(), Some("."));
        assert_eq!(
            relative(root, Path::new("/srv/app/a/../b/./c")).as_deref(),
            Some("b/c")
        );
        assert_eq!(relative(root, Path::new("/srv/app/../other")), None);
        assert_eq!(relative(root, Path::new("/srv/application")), None);
        assert_eq!(relative(root, Path::new("/etc/passwd")), None);
    }

    #[test]
    fn escaping_and_malformed_paths_are_refused() {
        assert_eq!(check("a/b"), Ok(()));
        assert_eq!(check("."), Ok(()));
        assert!(matches!(check("/etc/passwd"), Err(PathError::Absolute(_))));
        assert!(matches!(check("a/../../x"), Err(PathError::Escapes(_))));
        assert!(matches!(check(".."), Err(PathError::Escapes(_))));
        assert!(matches!(check("a//b"), Err(PathError::Malformed(_))));
        assert!(matches!(check("a/./b"), Err(PathError::Malformed(_))));
        assert!(matches!(check(""), Err(PathError::Malformed(_))));
        assert_eq!(parent("a/b/c"), "a/b");
        assert_eq!(parent("a"), ".");
    }
}
