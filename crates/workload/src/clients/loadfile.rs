//! dbench's loadfile format, read whole before anything runs: one operation per line —
//! an optional time stamp, the operation, its quoted paths and numbers, and the NT status the
//! operation is expected to end with. Paths under `\clients\client1` become paths in each
//! client's own directory. A line that cannot be read is refused with its file and line.

use std::ffi::CString;

/// Where a path is: in the client's own directory, or in the run's directory (`\clients`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    Client,
    Top,
}

/// A path of the loadfile, relative to its base, ready for the `*at` calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadPath {
    pub base: Base,
    pub rel: CString,
}

/// One operation of the loadfile, with what dbench's fileio backend does for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadOp {
    /// open (O_CREAT for create, O_TRUNC for overwrite; a directory is made and opened).
    NtCreateX {
        path: LoadPath,
        directory: bool,
        create: bool,
        overwrite: bool,
        handle: u32,
    },
    Close {
        handle: u32,
    },
    Rename {
        from: LoadPath,
        to: LoadPath,
    },
    Unlink {
        path: LoadPath,
    },
    Deltree {
        path: LoadPath,
    },
    Rmdir {
        path: LoadPath,
    },
    Mkdir {
        path: LoadPath,
    },
    /// stat of a path (and, when it does not exist, a search of its directory).
    QueryPath {
        path: LoadPath,
    },
    /// fstat of an open file.
    QueryFile {
        handle: u32,
    },
    /// statvfs of the client's directory.
    QueryFs,
    /// fstat and utime of an open file.
    SetFile {
        handle: u32,
    },
    /// a listing of up to `max` entries of the directory of a wildcard path.
    FindFirst {
        path: LoadPath,
        max: u32,
    },
    WriteX {
        handle: u32,
        offset: u64,
        size: u32,
        expect: u32,
    },
    ReadX {
        handle: u32,
        offset: u64,
        size: u32,
        expect: u32,
    },
    LockX {
        handle: u32,
        offset: u64,
        size: u32,
    },
    UnlockX {
        handle: u32,
        offset: u64,
        size: u32,
    },
    /// fsync of an open file.
    Flush {
        handle: u32,
    },
}

/// Operation names as the loadfile writes them, and as results name them.
pub const NAMES: [&str; 17] = [
    "NTCreateX",
    "Close",
    "Rename",
    "Unlink",
    "Deltree",
    "Rmdir",
    "Mkdir",
    "QUERY_PATH_INFORMATION",
    "QUERY_FILE_INFORMATION",
    "QUERY_FS_INFORMATION",
    "SET_FILE_INFORMATION",
    "FIND_FIRST",
    "WriteX",
    "ReadX",
    "LockX",
    "UnlockX",
    "Flush",
];

impl LoadOp {
    /// Its index in [`NAMES`].
    pub fn kind(&self) -> usize {
        match self {
            LoadOp::NtCreateX { .. } => 0,
            LoadOp::Close { .. } => 1,
            LoadOp::Rename { .. } => 2,
            LoadOp::Unlink { .. } => 3,
            LoadOp::Deltree { .. } => 4,
            LoadOp::Rmdir { .. } => 5,
            LoadOp::Mkdir { .. } => 6,
            LoadOp::QueryPath { .. } => 7,
            LoadOp::QueryFile { .. } => 8,
            LoadOp::QueryFs => 9,
            LoadOp::SetFile { .. } => 10,
            LoadOp::FindFirst { .. } => 11,
            LoadOp::WriteX { .. } => 12,
            LoadOp::ReadX { .. } => 13,
            LoadOp::LockX { .. } => 14,
            LoadOp::UnlockX { .. } => 15,
            LoadOp::Flush { .. } => 16,
        }
    }
}

/// A line of the loadfile: its number, its operation and whether it is expected to succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub number: usize,
    pub op: LoadOp,
    pub expect_ok: bool,
}

/// Splits a line into tokens: words, and quoted strings (quotes removed).
fn tokens(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '"' {
            chars.next();
            let mut s = String::new();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some(c) => s.push(c),
                    None => return Err("a quoted path is not closed".into()),
                }
            }
            out.push(s);
        } else {
            let mut s = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                s.push(c);
                chars.next();
            }
            out.push(s);
        }
    }
    Ok(out)
}

fn parse_number(text: &str) -> Result<u64, String> {
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|_| format!("'{text}' is not a number"))
}

/// `\clients\client1\~dmtmp\WORD` -> the client's `~dmtmp/WORD`; `\clients` -> the top's
/// `clients`. Other paths are refused: every client must stay in its own directory.
fn path(text: &str) -> Result<LoadPath, String> {
    let unix = text.replace('\\', "/");
    let unix = unix.trim_start_matches('/');
    let (base, rel) = if let Some(rest) = unix.strip_prefix("clients/client1") {
        if !rest.is_empty() && !rest.starts_with('/') {
            return Err(format!("'{text}' is not under \\clients\\client1"));
        }
        let rest = rest.trim_start_matches('/');
        (Base::Client, if rest.is_empty() { "." } else { rest })
    } else if unix == "clients" {
        (Base::Top, ".")
    } else {
        return Err(format!(
            "'{text}' is outside \\clients\\client1, the client's own directory"
        ));
    };
    if rel.split('/').any(|part| part == "..") {
        return Err(format!("'{text}' leaves the client's directory"));
    }
    Ok(LoadPath {
        base,
        rel: CString::new(rel).map_err(|_| format!("'{text}' holds a NUL"))?,
    })
}

/// Reads a whole loadfile; `name` names it in errors (`client.txt:12: ...`).
pub fn parse(text: &str, name: &str) -> Result<Vec<Line>, String> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let number = i + 1;
        let at = |message: String| format!("{name}:{number}: {message}");
        let raw = raw.trim();
        if raw.is_empty() || raw.starts_with('#') {
            continue;
        }
        let mut t = tokens(raw).map_err(at)?;
        // An optional time stamp first (dbench 4 loadfiles with timing).
        if t.first()
            .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        {
            t.remove(0);
        }
        if t.len() < 2 {
            return Err(at("an operation needs its arguments and a status".into()));
        }
        let status = t.pop().expect("two or more");
        let expect_ok = match status.as_str() {
            "NT_STATUS_OK" => true,
            s if s.starts_with("NT_STATUS_") => false,
            s if s.starts_with("0x") => parse_number(s).map_err(at)? == 0,
            other => return Err(at(format!("'{other}' is not a status (NT_STATUS_...)"))),
        };
        let op = t.remove(0);
        let want = |n: usize| -> Result<(), String> {
            if t.len() < n {
                Err(at(format!("{op} needs {n} arguments, found {}", t.len())))
            } else {
                Ok(())
            }
        };
        let num = |k: usize| parse_number(&t[k]).map_err(at);
        let small = |k: usize| -> Result<u32, String> {
            let v = parse_number(&t[k]).map_err(at)?;
            u32::try_from(v).map_err(|_| at(format!("{v} is too large")))
        };
        let p = |k: usize| path(&t[k]).map_err(at);
        let parsed = match op.as_str() {
            "NTCreateX" => {
                want(4)?;
                let options = num(1)?;
                let disposition = num(2)?;
                LoadOp::NtCreateX {
                    path: p(0)?,
                    directory: options & 0x1 != 0,
                    create: disposition == 2,
                    overwrite: disposition == 4 || disposition == 5,
                    handle: small(3)?,
                }
            }
            "Close" => {
                want(1)?;
                LoadOp::Close { handle: small(0)? }
            }
            "Rename" => {
                want(2)?;
                LoadOp::Rename {
                    from: p(0)?,
                    to: p(1)?,
                }
            }
            "Unlink" => {
                want(1)?;
                LoadOp::Unlink { path: p(0)? }
            }
            "Deltree" => {
                want(1)?;
                LoadOp::Deltree { path: p(0)? }
            }
            "Rmdir" => {
                want(1)?;
                LoadOp::Rmdir { path: p(0)? }
            }
            "Mkdir" => {
                want(1)?;
                LoadOp::Mkdir { path: p(0)? }
            }
            "QUERY_PATH_INFORMATION" => {
                want(1)?;
                LoadOp::QueryPath { path: p(0)? }
            }
            "QUERY_FILE_INFORMATION" => {
                want(1)?;
                LoadOp::QueryFile { handle: small(0)? }
            }
            "QUERY_FS_INFORMATION" => LoadOp::QueryFs,
            "SET_FILE_INFORMATION" => {
                want(1)?;
                LoadOp::SetFile { handle: small(0)? }
            }
            "FIND_FIRST" => {
                want(3)?;
                LoadOp::FindFirst {
                    path: p(0)?,
                    max: small(2)?,
                }
            }
            "WriteX" | "ReadX" => {
                want(4)?;
                let (handle, offset, size, expect) = (small(0)?, num(1)?, small(2)?, small(3)?);
                if size > 16 << 20 {
                    return Err(at(format!("{op} of {size} bytes: at most 16 MiB")));
                }
                if op == "WriteX" {
                    LoadOp::WriteX {
                        handle,
                        offset,
                        size,
                        expect,
                    }
                } else {
                    LoadOp::ReadX {
                        handle,
                        offset,
                        size,
                        expect,
                    }
                }
            }
            "LockX" | "UnlockX" => {
                want(3)?;
                let (handle, offset, size) = (small(0)?, num(1)?, small(2)?);
                if op == "LockX" {
                    LoadOp::LockX {
                        handle,
                        offset,
                        size,
                    }
                } else {
                    LoadOp::UnlockX {
                        handle,
                        offset,
                        size,
                    }
                }
            }
            "Flush" => {
                want(1)?;
                LoadOp::Flush { handle: small(0)? }
            }
            other => {
                return Err(at(format!(
                    "unknown operation '{other}'; a loadfile has {}",
                    NAMES.join(", ")
                )))
            }
        };
        lines.push(Line {
            number,
            op: parsed,
            expect_ok,
        });
    }
    if lines.is_empty() {
        return Err(format!("{name}: no operation in it"));
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_as_dbench_reads_them() {
        let text = "# a comment\nNTCreateX \"\\clients\\client1\\~dmtmp\\WORD\\A.DOC\" 0x40 0x2 9938 NT_STATUS_OK\n\
                    0.5 WriteX 9938 65536 4096 4096 NT_STATUS_OK\nMkdir \"\\clients\" NT_STATUS_OK\n\
                    Unlink \"\\clients\\client1\\gone\" 0x6 NT_STATUS_OBJECT_NAME_NOT_FOUND\n";
        let lines = parse(text, "t.txt").unwrap();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0].number, 2);
        assert_eq!(
            lines[0].op,
            LoadOp::NtCreateX {
                path: LoadPath {
                    base: Base::Client,
                    rel: CString::new("~dmtmp/WORD/A.DOC").unwrap()
                },
                directory: false,
                create: true,
                overwrite: false,
                handle: 9938
            }
        );
        assert!(matches!(
            lines[1].op,
            LoadOp::WriteX {
                offset: 65536,
                size: 4096,
                ..
            }
        ));
        assert_eq!(
            lines[2].op,
            LoadOp::Mkdir {
                path: LoadPath {
                    base: Base::Top,
                    rel: CString::new(".").unwrap()
                }
            }
        );
        assert!(!lines[3].expect_ok);
    }

    #[test]
    fn a_bad_line_is_refused_with_its_number() {
        let bad = |text: &str| parse(text, "bad.txt").unwrap_err();
        assert_eq!(
            bad("Close 1 NT_STATUS_OK\nFrobnicate 1 NT_STATUS_OK\n")
                .split(';')
                .next()
                .unwrap(),
            "bad.txt:2: unknown operation 'Frobnicate'"
        );
        assert!(bad("ReadX 1 2 NT_STATUS_OK").starts_with("bad.txt:1: ReadX needs 4 arguments"));
        assert!(bad("Close 1 OK").starts_with("bad.txt:1: 'OK' is not a status"));
        assert!(
            bad("Unlink \"\\etc\\passwd\" 0 NT_STATUS_OK").contains("outside \\clients\\client1")
        );
        assert!(bad("Unlink \"\\clients\\client1\\..\\x\" 0 NT_STATUS_OK")
            .contains("leaves the client's directory"));
        assert!(bad("Close x NT_STATUS_OK").contains("'x' is not a number"));
        assert!(bad("").contains("no operation"));
    }
}
