//! dbench's loadfile format, read whole before anything runs: one operation per line —
//! an optional time stamp, the operation, its quoted paths and numbers, and the NT status the
//! operation is expected to end with. Paths under `\clients\client1` become paths in each
//! client's own directory. A line that cannot be read is refused with its file and line.
//!
//! There is one reading of a loadfile, this one: dbench itself (method `tool`) is never handed
//! the file given, but [`for_dbench`]'s copy of the lines read here, written so that dbench
//! 4.0 reads every word of it as this reader did. What dbench 4.0's reader does (its
//! `child.c`, `util.c`), which the copy is written for: it reads a line with `fgets` into
//! 1023 bytes (a longer line's rest is its next line), turns every `\` of the line into `/`
//! and then every " /" into " ", splits it at spaces only — a `"` anywhere switching quoting
//! on or off, and dropped — copying each word unbounded into a buffer of 100 bytes, reads
//! numbers with `strtol(.., 0)` (a leading 0 is octal) into `int`s, takes a word that starts
//! with `/` as a path, puts its directory (`-D`) in front and turns every `client1` of the
//! result into its client's name.

use std::ffi::CString;

/// Where a path is: in the client's own directory, or in the run's directory (`\clients`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// Splits a line into its words as dbench does: at spaces only; a word in double quotes (a
/// path) may hold spaces and is taken without its quotes. What dbench would read otherwise is
/// refused: a quote inside a word (dbench joins what follows it to the word), and any control
/// character — a TAB is a separator here for no reader, and dbench would make it part of a
/// path.
fn words(line: &str) -> Result<Vec<&str>, String> {
    if let Some(c) = line.chars().find(|c| c.is_control()) {
        return Err(if c == '\t' {
            "a TAB in the line: dbench separates words at spaces only (it would read the TAB, and what follows it, as part of the word); write spaces".into()
        } else {
            format!(
                "a control character (U+{:04X}) in the line: a loadfile is text; remove it",
                c as u32
            )
        });
    }
    let bytes = line.as_bytes();
    let mut out = Vec::with_capacity(8);
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b' ' {
            i += 1;
        } else if bytes[i] == b'"' {
            let len = bytes[i + 1..]
                .iter()
                .position(|&b| b == b'"')
                .ok_or("a quoted path is not closed")?;
            out.push(&line[i + 1..i + 1 + len]);
            i += len + 2;
            if i < bytes.len() && bytes[i] != b' ' {
                return Err(quote_inside(&line[i - len - 2..]));
            }
        } else {
            let len = bytes[i..]
                .iter()
                .position(|&b| b == b' ')
                .unwrap_or(bytes.len() - i);
            let word = &line[i..i + len];
            if word.contains('"') {
                return Err(quote_inside(word));
            }
            out.push(word);
            i += len;
        }
    }
    Ok(out)
}

fn quote_inside(word: &str) -> String {
    let word = word.split(' ').next().unwrap_or(word);
    format!("a quote inside the word {word}: dbench joins what is quoted to the word around it; put the whole path in quotes and nothing else")
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

/// The words of a line the replay does not use and dbench reads: its time stamp (dbench
/// waits for it) and its status (which dbench names when an outcome differs).
struct Said<'t> {
    time: Option<&'t str>,
    status: &'t str,
}

/// Reads a whole loadfile; `name` names it in errors (`client.txt:12: ...`).
pub fn parse(text: &str, name: &str) -> Result<Vec<Line>, String> {
    let mut lines = Vec::new();
    read(text, name, |line, _| {
        lines.push(line);
        Ok(())
    })?;
    Ok(lines)
}

/// The loadfile as dbench 4.0 is given it: every line read by [`parse`], written so that
/// dbench reads it as `parse` did (module doc) — paths quoted, with `/`, under
/// `/clients/client1` (dbench, run in the run's directory with `-D .`, puts `.` in front),
/// numbers in decimal, the time stamp and status as written, one line for each line of the
/// file (comments and blank lines empty) so that the line numbers dbench reports are the
/// file's; every word bounded, a line is far under dbench's 1023 bytes. What dbench cannot
/// hold as `parse` read it is refused with its line: a word over 99 bytes, a number beyond
/// dbench's `int`, a space before a `/` in a path.
pub fn for_dbench(text: &str, name: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut written = 0;
    read(text, name, |line, said| {
        for _ in written + 1..line.number {
            out.push('\n');
        }
        written = line.number;
        dbench_line(&mut out, &line, &said)
    })?;
    Ok(out)
}

/// The longest word dbench 4.0 holds: its buffers are 100 bytes, the NUL included.
pub const DBENCH_WORD: usize = 99;

/// Writes `line` as dbench reads it (see [`for_dbench`]).
fn dbench_line(out: &mut String, line: &Line, said: &Said) -> Result<(), String> {
    use std::fmt::Write;
    let word = |what: &str, text: &str| {
        if text.len() > DBENCH_WORD {
            Err(format!(
                "the {what} {text} is {} bytes; dbench 4.0 holds a word in {} bytes at most (it overruns its buffer): shorten it, or use method = \"native\"",
                text.len(),
                DBENCH_WORD
            ))
        } else {
            Ok(())
        }
    };
    // A number where dbench reads it into an int (handles, offsets, sizes, counts).
    let int = |what: &str, v: u64| {
        if v > i32::MAX as u64 {
            Err(format!(
                "the {what} {v} is more than dbench 4.0 holds ({}, its int): use method = \"native\"",
                i32::MAX
            ))
        } else {
            Ok(v)
        }
    };
    let path = |p: &LoadPath| -> Result<String, String> {
        let rel = p
            .rel
            .to_str()
            .map_err(|_| "a path is not UTF-8".to_string())?;
        let text = match (p.base, rel) {
            (Base::Top, _) => "/clients".to_string(),
            (Base::Client, ".") => "/clients/client1".to_string(),
            (Base::Client, rel) => format!("/clients/client1/{rel}"),
        };
        word("path", &text)?;
        if text.contains(" /") {
            return Err(format!(
                "the path {text} has a space before a '/': dbench removes that '/' from the line and would read another path; rename it"
            ));
        }
        Ok(format!("\"{text}\""))
    };
    let mut put = |words: std::fmt::Arguments| {
        let _ = out.write_fmt(words);
    };
    if let Some(time) = said.time {
        word("time stamp", time)?;
        put(format_args!("{time} "));
    }
    let name = NAMES[line.op.kind()];
    match &line.op {
        LoadOp::NtCreateX {
            path: p,
            directory,
            create,
            overwrite,
            handle,
        } => {
            // dbench's open looks at the directory bit of the options and at dispositions
            // 2 (create), 4 and 5 (overwrite) only: these say what the line says.
            let disposition = match (create, overwrite) {
                (true, _) => 2,
                (_, true) => 5,
                _ => 1,
            };
            let (p, handle) = (path(p)?, int("handle", u64::from(*handle))?);
            put(format_args!(
                "{name} {p} {} {disposition} {handle}",
                u8::from(*directory)
            ));
        }
        LoadOp::Rename { from, to } => {
            let (from, to) = (path(from)?, path(to)?);
            put(format_args!("{name} {from} {to}"));
        }
        // The attribute, level and count dbench does not use are 0.
        LoadOp::Unlink { path: p } => put(format_args!("{name} {} 0", path(p)?)),
        LoadOp::Deltree { path: p } | LoadOp::Rmdir { path: p } | LoadOp::Mkdir { path: p } => {
            put(format_args!("{name} {}", path(p)?))
        }
        LoadOp::QueryPath { path: p } => put(format_args!("{name} {} 0", path(p)?)),
        LoadOp::FindFirst { path: p, max } => {
            let (p, max) = (path(p)?, int("count", u64::from(*max))?);
            put(format_args!("{name} {p} 0 {max} 0"));
        }
        LoadOp::QueryFs => put(format_args!("{name} 0")),
        LoadOp::QueryFile { handle } | LoadOp::SetFile { handle } => put(format_args!(
            "{name} {} 0",
            int("handle", u64::from(*handle))?
        )),
        LoadOp::Close { handle } | LoadOp::Flush { handle } => put(format_args!(
            "{name} {}",
            int("handle", u64::from(*handle))?
        )),
        LoadOp::WriteX {
            handle,
            offset,
            size,
            expect,
        }
        | LoadOp::ReadX {
            handle,
            offset,
            size,
            expect,
        } => {
            let handle = int("handle", u64::from(*handle))?;
            let offset = int("offset", *offset)?;
            let expect = int("size expected", u64::from(*expect))?;
            put(format_args!("{name} {handle} {offset} {size} {expect}"));
        }
        LoadOp::LockX {
            handle,
            offset,
            size,
        }
        | LoadOp::UnlockX {
            handle,
            offset,
            size,
        } => {
            let handle = int("handle", u64::from(*handle))?;
            // dbench reads a lock's offset into a uint32_t.
            if *offset > u64::from(u32::MAX) {
                return Err(format!(
                    "the lock offset {offset} is more than dbench 4.0 holds ({}): use method = \"native\"",
                    u32::MAX
                ));
            }
            let size = int("lock size", u64::from(*size))?;
            put(format_args!("{name} {handle} {offset} {size}"));
        }
    }
    word("status", said.status)?;
    put(format_args!(" {}\n", said.status));
    Ok(())
}

/// Reads a whole loadfile, handing each operation and what else dbench reads of its line to
/// `each`; `name` names the file in errors.
fn read<'t>(
    text: &'t str,
    name: &str,
    mut each: impl FnMut(Line, Said<'t>) -> Result<(), String>,
) -> Result<(), String> {
    let mut any = false;
    for (i, raw) in text.lines().enumerate() {
        let number = i + 1;
        let at = |message: String| format!("{name}:{number}: {message}");
        let mut t = words(raw).map_err(at)?;
        if t.first().is_none_or(|w| w.starts_with('#')) {
            continue;
        }
        // An optional time stamp first (dbench 4 loadfiles with timing): seconds.
        let time = match t.first() {
            Some(w) if w.starts_with(|c: char| c.is_ascii_digit()) => {
                let seconds =
                    w.bytes().all(|b| b.is_ascii_digit() || b == b'.') && w.parse::<f64>().is_ok();
                if !seconds {
                    return Err(at(format!("'{w}' is not a time stamp (seconds, as 12.5)")));
                }
                Some(t.remove(0))
            }
            _ => None,
        };
        if t.len() < 2 {
            return Err(at("an operation needs its arguments and a status".into()));
        }
        let status = t.pop().expect("two or more");
        let expect_ok = match status {
            "NT_STATUS_OK" => true,
            s if s.strip_prefix("NT_STATUS_").is_some_and(|rest| {
                !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            }) =>
            {
                false
            }
            s if s.starts_with("0x") => parse_number(s).map_err(at)? == 0,
            other => {
                return Err(at(format!(
                    "'{other}' is not a status (NT_STATUS_ and a name, or a number 0x...)"
                )))
            }
        };
        let op = t.remove(0);
        let want = |n: usize| -> Result<(), String> {
            if t.len() < n {
                Err(at(format!("{op} needs {n} arguments, found {}", t.len())))
            } else {
                Ok(())
            }
        };
        let num = |k: usize| parse_number(t[k]).map_err(at);
        let small = |k: usize| -> Result<u32, String> {
            let v = parse_number(t[k]).map_err(at)?;
            u32::try_from(v).map_err(|_| at(format!("{v} is too large")))
        };
        let p = |k: usize| path(t[k]).map_err(at);
        let parsed = match op {
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
        each(
            Line {
                number,
                op: parsed,
                expect_ok,
            },
            Said { time, status },
        )
        .map_err(at)?;
        any = true;
    }
    if !any {
        return Err(format!("{name}: no operation in it"));
    }
    Ok(())
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

    /// What dbench 4.0 reads otherwise than a reader splitting at any whitespace was how a
    /// loadfile hid `\..\..` from the check (issue 35): each is refused, for both methods.
    #[test]
    fn a_line_dbench_would_read_otherwise_is_refused() {
        let bad = |text: &str| parse(text, "bad.txt").unwrap_err();
        for smuggled in [
            "Mkdir \"\\clients\\client1\\x\"\t\"\" NT_STATUS_OK",
            "Unlink \"\\clients\\client1\\x\"\t\"\\..\\..\\..\\..\\victim\" 0x0 NT_STATUS_OK",
            "Close 1\tNT_STATUS_OK",
            "\tClose 1 NT_STATUS_OK",
        ] {
            let e = bad(smuggled);
            assert!(
                e.starts_with(
                    "bad.txt:1: a TAB in the line: dbench separates words at spaces only"
                ),
                "{smuggled:?}: {e}"
            );
        }
        assert!(bad("Close 1 NT_STATUS_OK\nClose 1\u{1b} NT_STATUS_OK")
            .starts_with("bad.txt:2: a control character (U+001B) in the line"));
        assert!(bad("Close\0 1 NT_STATUS_OK").contains("(U+0000)"));
        // dbench joins what is between quotes to the word around it.
        for joined in [
            "Unlink \\clients\\client1\\x\"\\..\\..\\victim\" 0 NT_STATUS_OK",
            "Unlink \"\\clients\\client1\\x\"\"\\..\\victim\" 0 NT_STATUS_OK",
            "Unlink \"\\clients\\client1\\x\"y 0 NT_STATUS_OK",
        ] {
            assert!(
                bad(joined).contains("a quote inside the word"),
                "{joined}: {}",
                bad(joined)
            );
        }
        // Only a space separates words, for dbench and here.
        assert!(bad("Close\u{a0}1 NT_STATUS_OK").contains("unknown operation 'Close\u{a0}1'"));
        assert!(bad("12x Close 1 NT_STATUS_OK").contains("'12x' is not a time stamp"));
        assert!(bad("Close 1 NT_STATUS_A\"B").contains("a quote inside the word"));
        assert!(bad("Close 1 NT_STATUS_A/B").contains("is not a status"));
        let timed = parse("1.25 Close 1 NT_STATUS_OK\n  Close 2 0x0  \n", "t").unwrap();
        assert!(timed.iter().all(|l| l.expect_ok) && timed.len() == 2);
    }

    /// dbench's buffers hold a word of 99 bytes and its numbers are `int`s: what it cannot
    /// hold as read here is refused for it, and the replay, which can, still takes it.
    #[test]
    fn what_dbench_cannot_hold_is_refused_for_it() {
        let dbench = |text: &str| for_dbench(text, "big.txt");
        let path = |rel_len: usize| {
            format!(
                "NTCreateX \"\\clients\\client1\\{}\" 0x0 0x2 1 NT_STATUS_OK\n",
                "a".repeat(rel_len)
            )
        };
        // "/clients/client1/" is 17 bytes.
        assert!(dbench(&path(82)).is_ok());
        let e = dbench(&path(83)).unwrap_err();
        assert!(
            e.starts_with("big.txt:1: the path /clients/client1/aaa")
                && e.contains("is 100 bytes; dbench 4.0 holds a word in 99 bytes at most")
                && e.contains("method = \"native\""),
            "{e}"
        );
        assert!(parse(&path(200), "big.txt").is_ok());
        let status = format!("Close 1 NT_STATUS_{}", "X".repeat(90));
        for (line, says) in [
            (
                "WriteX 1 2147483648 1 1 NT_STATUS_OK",
                "the offset 2147483648 is more than dbench 4.0 holds",
            ),
            (
                "ReadX 2147483648 0 1 1 NT_STATUS_OK",
                "the handle 2147483648",
            ),
            (
                "LockX 1 4294967296 1 NT_STATUS_OK",
                "the lock offset 4294967296",
            ),
            (
                "FIND_FIRST \"\\clients\\client1\\*\" 1 2147483648 0 NT_STATUS_OK",
                "the count 2147483648",
            ),
            (
                "Unlink \"\\clients\\client1\\a \\b\" 0 NT_STATUS_OK",
                "has a space before a '/'",
            ),
            (&status, "the status NT_STATUS_XXX"),
        ] {
            assert!(parse(line, "big.txt").is_ok(), "{line}");
            let e = dbench(line).unwrap_err();
            assert!(
                e.starts_with("big.txt:1: ") && e.contains(says),
                "{line}: {e}"
            );
        }
        assert!(dbench("LockX 1 4294967295 1 NT_STATUS_OK").is_ok());
        assert!(dbench("WriteX 1 2147483647 1 1 NT_STATUS_OK").is_ok());
    }

    /// dbench 4.0's reading of one line of its loadfile, written for these tests from what its
    /// source does (child.c's child_run, util.c's next_token and all_string_sub): None for a
    /// line it skips, else its words (the time stamp taken off) and the paths it makes of the
    /// second and third word for the client named `client`, run with `-D .`.
    fn dbench_reads(line: &str, client: &str) -> Option<(Vec<String>, String, String)> {
        let line = line.replace('\\', "/").replace(" /", " ");
        let mut words: Vec<String> = Vec::new();
        let mut chars = line.chars().peekable();
        while words.len() < 19 {
            while chars.peek() == Some(&' ') {
                chars.next();
            }
            if chars.peek().is_none() {
                break;
            }
            let (mut word, mut quoted) = (String::new(), false);
            for c in chars.by_ref() {
                match c {
                    ' ' if !quoted => break,
                    '"' => quoted = !quoted,
                    c => word.push(c),
                }
            }
            assert!(
                word.len() <= DBENCH_WORD,
                "dbench overruns its buffer: {word}"
            );
            words.push(word);
        }
        if words.len() < 2 || words[0].starts_with('#') {
            return None;
        }
        if words[0].starts_with(|c: char| c.is_ascii_digit()) {
            words.remove(0);
        }
        let status = words.last().expect("two words");
        if !status.starts_with("NT_STATUS_") && !status.starts_with("0x") {
            return None;
        }
        let path = |k: usize| match words.get(k) {
            Some(w) if k + 1 < words.len() && w.starts_with('/') => {
                format!(".{w}").replace("client1", client)
            }
            _ => String::new(),
        };
        let (fname, fname2) = (path(1), path(2));
        Some((words, fname, fname2))
    }

    /// strtol(text, NULL, 0): a leading 0x is hex, a leading 0 octal; it stops at the first
    /// character that is not a digit.
    fn strtol(text: &str) -> i64 {
        let (digits, radix) = match text.strip_prefix("0x") {
            Some(hex) => (hex, 16),
            None if text.starts_with('0') => (text, 8),
            None => (text, 10),
        };
        let end = digits
            .find(|c: char| !c.is_digit(radix))
            .unwrap_or(digits.len());
        i64::from_str_radix(&digits[..end], radix).unwrap_or(0)
    }

    /// Checks that dbench reads `copy` (for_dbench's) as `lines` (parse's) were read: the
    /// same operation, paths and numbers on the same line numbers.
    fn read_alike(lines: &[Line], copy: &str) {
        let mut read = 0;
        for (i, text) in copy.lines().enumerate() {
            let Some((words, fname, fname2)) = dbench_reads(text, "client1") else {
                continue;
            };
            let line = &lines[read];
            read += 1;
            assert_eq!(line.number, i + 1, "{text}");
            assert_eq!(words[0], NAMES[line.op.kind()], "{text}");
            let int = |k: usize| strtol(&words[k]) as i32 as i64;
            let place = |p: &LoadPath| match (p.base, p.rel.to_str().unwrap()) {
                (Base::Top, _) => "./clients".to_string(),
                (Base::Client, ".") => "./clients/client1".to_string(),
                (Base::Client, rel) => format!("./clients/client1/{rel}"),
            };
            let status = words.last().unwrap();
            let ok = status == "NT_STATUS_OK"
                || status
                    .strip_prefix("0x")
                    .is_some_and(|h| u64::from_str_radix(h, 16) == Ok(0));
            assert_eq!(ok, line.expect_ok, "{text}");
            match &line.op {
                LoadOp::NtCreateX {
                    path,
                    directory,
                    create,
                    overwrite,
                    handle,
                } => {
                    assert_eq!(fname, place(path), "{text}");
                    let (options, disposition) = (int(2) as u32, int(3) as u32);
                    assert_eq!(options & 1 != 0, *directory, "{text}");
                    assert_eq!(disposition == 2, *create, "{text}");
                    assert_eq!(disposition == 4 || disposition == 5, *overwrite, "{text}");
                    assert_eq!(int(4), i64::from(*handle), "{text}");
                }
                LoadOp::Rename { from, to } => {
                    assert_eq!((fname, fname2), (place(from), place(to)), "{text}");
                }
                LoadOp::Unlink { path }
                | LoadOp::Deltree { path }
                | LoadOp::Rmdir { path }
                | LoadOp::Mkdir { path }
                | LoadOp::QueryPath { path } => assert_eq!(fname, place(path), "{text}"),
                LoadOp::FindFirst { path, max } => {
                    assert_eq!(fname, place(path), "{text}");
                    assert_eq!(int(3), i64::from(*max), "{text}");
                }
                LoadOp::QueryFs => {}
                LoadOp::Close { handle }
                | LoadOp::Flush { handle }
                | LoadOp::QueryFile { handle }
                | LoadOp::SetFile { handle } => assert_eq!(int(1), i64::from(*handle), "{text}"),
                LoadOp::WriteX {
                    handle,
                    offset,
                    size,
                    expect,
                }
                | LoadOp::ReadX {
                    handle,
                    offset,
                    size,
                    expect,
                } => {
                    let want = [*handle as i64, *offset as i64, *size as i64, *expect as i64];
                    assert_eq!([int(1), int(2), int(3), int(4)], want, "{text}");
                }
                LoadOp::LockX {
                    handle,
                    offset,
                    size,
                }
                | LoadOp::UnlockX {
                    handle,
                    offset,
                    size,
                } => {
                    assert_eq!(int(1), i64::from(*handle), "{text}");
                    assert_eq!(strtol(&words[2]) as u32 as u64, *offset, "{text}");
                    assert_eq!(int(3), i64::from(*size), "{text}");
                }
            }
            // Another client's paths: every client1 renamed, still in its own directory.
            let (_, other, _) = dbench_reads(text, "client4095").unwrap();
            if !other.is_empty() && other != "./clients" {
                assert!(other.starts_with("./clients/client4095"), "{text}");
                assert!(!other.split('/').any(|c| c == ".."), "{text}");
            }
        }
        assert_eq!(read, lines.len(), "dbench skipped a line fsbench read");
    }

    /// The copy dbench is handed reads, in dbench's own way, as the file read here: the
    /// built-in load, Debian's client.txt where it is installed, and lines written to tempt
    /// the two readers apart (spaces in paths, `client1` inside a path, octal-looking and hex
    /// numbers, time stamps, comments, numeric statuses, a CRLF line end).
    #[test]
    fn dbench_reads_the_copy_as_the_file_was_read() {
        let tempting = "# a comment\n\n\
            NTCreateX \"\\clients\\client1\\a b\\client1.doc\" 0x41 0x5 010 NT_STATUS_OK\n\
            1.5 WriteX 010 0x10 0100 0100 0x0\r\n\
            \x20 ReadX 8 0 64 64 0xC0000034\n\
            Rename \"\\clients\\client1\\a b\\client1.doc\" \\clients\\client1\\x NT_STATUS_OK\n\
            FIND_FIRST \"\\\\clients\\client1\\*.doc\" 260 0x556 0 NT_STATUS_NO_SUCH_FILE\n\
            LockX 8 4294967295 1 NT_STATUS_OK\n\
            UnlockX 8 4294967295 1 NT_STATUS_OK\n\
            Deltree \"\\clients\" NT_STATUS_OK\n\
            QUERY_FS_INFORMATION NT_STATUS_OK\n\
            Close 8 NT_STATUS_OK\n";
        let mut texts = vec![tempting.to_string(), super::super::BUILTIN.to_string()];
        if let Ok(client) = std::fs::read_to_string("/usr/share/dbench/client.txt") {
            // Its first 20,000 lines: every kind of its operations, in a test's time.
            texts.push(client.split_inclusive('\n').take(20_000).collect());
        }
        for text in &texts {
            let lines = parse(text, "t").unwrap();
            read_alike(&lines, &for_dbench(text, "t").unwrap());
        }
    }

    /// A path word of a line for the property test: under the client's directory (or not),
    /// quoted or not, made of pieces that part readers.
    fn path_word() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        // The plain ones more often than those refused, so that many lines are read.
        #[rustfmt::skip]
        const PIECES: [&str; 18] = [
            "a", "b", " ", "/", "/", "\\", "\\", "..", ".", "client1", "é", " /", "*", "\t", "\"",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
            "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",
        ];
        (
            proptest::sample::select(vec![
                "\\clients\\client1\\",
                "\\clients\\client1",
                "\\\\clients\\client1\\",
                "clients/client1/",
                "\\clients",
            ]),
            proptest::collection::vec(proptest::sample::select(PIECES.to_vec()), 0..8),
            any::<bool>(),
        )
            .prop_map(|(prefix, pieces, quoted)| {
                let path = format!("{prefix}{}", pieces.concat());
                if quoted {
                    format!("\"{path}\"")
                } else {
                    path
                }
            })
    }

    proptest::proptest! {
        /// Any line of any operation — paths made of the pieces that part readers (spaces,
        /// TABs, quotes, `\` and `/`, `..`, `client1`, long words), numbers written as dbench
        /// would read otherwise (a leading 0, hex, beyond an int), an optional time stamp —
        /// is either refused, or read by dbench from the copy as it was read here.
        #[test]
        fn any_line_is_refused_or_read_alike_by_dbench(
            op in proptest::sample::select(vec![
                "NTCreateX", "Unlink", "Rename", "Deltree", "Mkdir", "QUERY_PATH_INFORMATION",
                "FIND_FIRST", "WriteX", "ReadX", "LockX", "UnlockX", "Close", "Flush",
                "QUERY_FILE_INFORMATION", "SET_FILE_INFORMATION", "QUERY_FS_INFORMATION",
            ]),
            paths in proptest::collection::vec(path_word(), 2),
            numbers in proptest::collection::vec(proptest::sample::select(vec![
                "0", "1", "2", "5", "7", "010", "0x1f", "0100", "65536", "2147483647",
                "2147483648", "4294967295", "4294967296",
            ]), 4),
            time in proptest::sample::select(vec!["", "0.5 ", "12 "]),
            gap in proptest::sample::select(vec![" ", " ", " ", "  ", "\t"]),
            status in proptest::sample::select(vec![
                "NT_STATUS_OK", "0x0", "0xc0000034", "NT_STATUS_NO_SUCH_FILE",
            ]),
        ) {
            let (p, n) = (&paths, &numbers);
            let args: Vec<&str> = match op {
                "NTCreateX" | "FIND_FIRST" => vec![&p[0], n[0], n[1], n[2]],
                "Rename" => vec![&p[0], &p[1]],
                "Unlink" | "QUERY_PATH_INFORMATION" => vec![&p[0], n[0]],
                "Deltree" | "Mkdir" => vec![&p[0]],
                "WriteX" | "ReadX" => n.clone(),
                "LockX" | "UnlockX" => n[..3].to_vec(),
                "QUERY_FILE_INFORMATION" | "SET_FILE_INFORMATION" => n[..2].to_vec(),
                _ => n[..1].to_vec(),
            };
            let line = format!("{time}{op}{gap}{}{gap}{status}\n", args.join(gap));
            if let (Ok(lines), Ok(copy)) = (parse(&line, "p"), for_dbench(&line, "p")) {
                read_alike(&lines, &copy);
            }
        }
    }
}
