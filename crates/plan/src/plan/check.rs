//! Where a plan's mistakes are said: a [`Checker`] turns a span of the plan's text (or a flag
//! of the command line) into a [`PlanError`] naming file, line, column and key; and the rule
//! for the names a plan gives things.

use super::PlanError;
use std::ops::Range;
use toml::Spanned;

/// Where a span starts, as 1-based line and column.
pub(super) fn position(text: &str, span: Range<usize>) -> (usize, usize) {
    let start = span.start.min(text.len());
    let before = &text[..start];
    let line = before.matches('\n').count() + 1;
    let column = before.rfind('\n').map_or(start, |nl| start - nl - 1) + 1;
    (line, column)
}

/// The plan's text and file name, for errors that point into it.
pub(super) struct Checker<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

impl Checker<'_> {
    /// A mistake at `span` of the text, under `key`.
    pub fn error(&self, span: Range<usize>, key: &str, message: impl Into<String>) -> PlanError {
        let (line, column) = position(self.text, span);
        PlanError {
            file: self.file.to_string(),
            line,
            column,
            key: key.to_string(),
            message: message.into(),
        }
    }

    /// A mistake in `value`, under `key`.
    pub fn at<T>(&self, value: &Spanned<T>, key: &str, message: impl Into<String>) -> PlanError {
        self.error(value.span(), key, message)
    }

    /// A mistake of the plan as a whole (no key of it to point at: something missing, or
    /// keys that do not go together), said at its first line under `key`.
    pub fn whole(&self, key: &str, message: impl Into<String>) -> PlanError {
        PlanError {
            file: self.file.to_string(),
            line: 1,
            column: 1,
            key: key.to_string(),
            message: message.into(),
        }
    }

    /// A mistake of the command line's value over a plan key: line 0, `flag` as the key.
    pub fn flag(&self, flag: &str, message: impl Into<String>) -> PlanError {
        PlanError {
            file: self.file.to_string(),
            line: 0,
            column: 0,
            key: flag.to_string(),
            message: message.into(),
        }
    }

    /// Refuses a name the plan gives something (an option set, a platform, an aging spec, a
    /// scheduler, a workload), at `key` where it is written; see [`name_error`].
    pub fn name(&self, name: &Spanned<String>, key: &str) -> Result<(), PlanError> {
        match name_error(name.get_ref()) {
            None => Ok(()),
            Some(e) => Err(self.at(name, key, e)),
        }
    }
}

/// Why `name` cannot name something in a plan, or None when it can. A name is one word of
/// letters (of any script), digits, `-` and `_`: names are joined by dots into each case's key
/// (a dot in one could make two cases one key), become labels on terminals and in reports,
/// and must never be a path (`/`, `..`), empty, or hold a NUL, a control character or a space.
pub fn name_error(name: &str) -> Option<String> {
    let fine = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    if !name.is_empty() && name.chars().all(fine) {
        return None;
    }
    Some(format!(
        "{name:?} is not a name: a name may contain only letters, digits, '-' and '_' \
         (e.g. big-inodes), and is not empty"
    ))
}

/// Why `name` cannot name an I/O scheduler (a plan's `schedulers`, `--scheduler`), or None:
/// it is part of each case's key, so it is a name ([`name_error`]).
pub fn scheduler_error(name: &str) -> Option<String> {
    name_error(name).map(|e| {
        format!("{e}; the schedulers are none, mq-deadline, kyber, bfq (or noop, deadline, cfq)")
    })
}

/// The first line of a deserializer's message (toml adds "in `key`" on the next).
pub(super) fn first_line(message: &str) -> String {
    message
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .to_string()
}
