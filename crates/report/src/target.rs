//! A prepared target in a few lines for the terminal: what it is, what it took, and the
//! integrity verdict (the full read-back is in the stored sample and the exports).

use fsbench_measure::units::{human_bytes, human_duration};
use fsbench_testbed::images::AgedTarget;
use fsbench_testbed::TargetInfo;
use std::io::{self, Write};

/// The prepared target in a few lines: what it is, what it took, and the integrity verdict.
pub fn write_target(out: &mut dyn Write, t: &TargetInfo) -> io::Result<()> {
    let backing = if t.device.loop_direct_io == Some(true) {
        "direct"
    } else {
        "buffered"
    };
    let device = match (&t.device.path, &t.device.image, &t.device.array) {
        // An array: its layout and every member, each of the image size.
        (Some(dev), image, Some(array)) => {
            let members: Vec<String> = array
                .members
                .iter()
                .map(|m| m.path.display().to_string())
                .collect();
            let each = human_bytes(array.members.first().map_or(0, |m| m.size_bytes));
            let what = match image {
                Some(_) => format!("sparse images of {each}, {backing} backing I/O"),
                None => format!("devices of {each}"),
            };
            format!(
                "{} on {} ({} over {}: {} {what})",
                t.filesystem,
                dev.display(),
                array.layout,
                members.join(", "),
                members.len()
            )
        }
        (Some(dev), Some(_), None) => format!(
            "{} on {} ({} sparse image, {} backing I/O)",
            t.filesystem,
            dev.display(),
            human_bytes(t.device.size_bytes),
            backing
        ),
        (Some(dev), None, None) => format!(
            "{} on {} ({})",
            t.filesystem,
            dev.display(),
            human_bytes(t.device.size_bytes)
        ),
        _ => format!(
            "{} in memory ({})",
            t.filesystem,
            human_bytes(t.device.size_bytes)
        ),
    };
    writeln!(out, "Target: {device}")?;
    if let Some(aging) = &t.aging {
        write_aging(out, aging)?;
    }
    if let Some(mkfs) = &t.mkfs {
        writeln!(
            out,
            "  made: `{}` in {}",
            mkfs.command,
            human_duration(mkfs.elapsed_ns)
        )?;
    }
    if let Some(m) = &t.mount {
        writeln!(
            out,
            "  mounted: {} ({}) in {}",
            m.mount_options,
            m.super_options,
            human_duration(m.elapsed_ns)
        )?;
        for (asked, got) in &m.changed {
            writeln!(
                out,
                "  mount option changed by the kernel: {asked} -> {got}"
            )?;
        }
        if !m.not_shown.is_empty() {
            writeln!(
                out,
                "  mount options the kernel does not show: {}",
                m.not_shown.join(",")
            )?;
        }
    }
    if let Some(s) = &t.scheduler {
        let note = s
            .note
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        let backing = s
            .backing_disk
            .as_deref()
            .map(|b| format!(", backing disk: {b}"))
            .unwrap_or_default();
        writeln!(out, "  scheduler: {}{note}{backing}", s.in_force)?;
    }
    if let Some(c) = &t.cache {
        let note = c
            .note
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        writeln!(out, "  cache: {} -> {}{note}", c.policy, c.state)?;
    }
    match &t.fsck {
        Some(f) => writeln!(
            out,
            "  fsck: {} (`{}`, exit {}, {})",
            if f.clean { "clean" } else { "PROBLEMS FOUND" },
            f.command,
            f.exit_status.map_or("none".to_string(), |s| s.to_string()),
            human_duration(f.elapsed_ns)
        )?,
        None if fsbench_testbed::fs::by_name(&t.filesystem)
            .is_some_and(|fs| !fs.capabilities().filesystem) =>
        {
            writeln!(
                out,
                "  no filesystem: nothing made, mounted or checked (the bare device)"
            )?
        }
        None => writeln!(out, "  fsck: not run")?,
    }
    Ok(())
}

/// An aged target: what aging made (fill, tree, fragmentation), and how this copy was made.
fn write_aging(out: &mut dyn Write, aging: &AgedTarget) -> io::Result<()> {
    let made = &aging.made;
    let after = &made.aged.after;
    let extents = after.extents.as_ref().map_or(String::new(), |e| {
        format!(
            ", {:.2} extents per file ({:.0} % of {} sampled files in more than one)",
            e.mean, e.fragmented_percent, e.files
        )
    });
    let free = after
        .free_space
        .as_ref()
        .and_then(|f| f.free_extents.map(|n| (n, f)))
        .map_or(String::new(), |(n, f)| {
            format!(", free space in {n} extents (`{}`)", f.command)
        });
    writeln!(
        out,
        "  aged: {} ({:.1} % full, {} files in {} directories{extents}{free}), made {} in {}",
        made.spec,
        after.fill_percent,
        after.files,
        after.dirs,
        made.made_at,
        human_duration(made.aged.elapsed_ns)
    )?;
    writeln!(
        out,
        "  copied from {}: {}{} in {}",
        aging.image.display(),
        aging.copy.method,
        if aging.copy.data_bytes > 0 {
            format!(" of {}", human_bytes(aging.copy.data_bytes))
        } else {
            String::new()
        },
        human_duration(aging.copy.elapsed_ns)
    )
}
