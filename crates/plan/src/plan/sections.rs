//! The plan's sections, each read and checked on its own from the raw file (and the command
//! line's overrides over it): repetitions, timeout, scale, the device, notes, when targets are
//! remade, the platforms, the ages, the schedulers, the cache policies, the filesystems, the
//! directory, the series interval, disturbed samples and md. Each returns typed values or the
//! mistake at its key; none asks anything of the host.

use super::check::{scheduler_error, Checker};
use super::{Overrides, PlanError, Remake, Repetitions, WithoutMd};
use crate::file::{OptionSets, PlanFile};
use fsbench_measure::series::SeriesInterval;
use fsbench_measure::units::{parse_duration_ns, parse_size};
use fsbench_model::{CachePolicy, DEFAULT_PLATFORM, FRESH};
use fsbench_testbed::aging::{AgingSpec, KEYS as AGING_KEYS};
use fsbench_testbed::array::ArraySpec;
use fsbench_testbed::device::SizeSetting;
use fsbench_testbed::fs::{self, Filesystem};
use fsbench_testbed::DeviceSpec;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Repetitions per case: `repetitions` (or `--repetitions`), and adaptive ones up to
/// `max_repetitions` until `target_ci_percent` is met.
pub(super) fn repetitions(
    check: &Checker<'_>,
    raw: &PlanFile,
    overrides: &Overrides,
) -> Result<Repetitions, PlanError> {
    let min = match (overrides.repetitions, &raw.repetitions) {
        (Some(n), _) if (1..=1000).contains(&n) => n,
        (Some(n), _) => {
            return Err(check.flag(
                "--repetitions",
                format!("must be between 1 and 1000 (got {n})"),
            ))
        }
        (None, None) => 3,
        (None, Some(r)) if (1..=1000).contains(r.get_ref()) => *r.get_ref() as u32,
        (None, Some(r)) => return Err(check.at(r, "repetitions", "must be between 1 and 1000")),
    };
    let target_ci = match &raw.target_ci_percent {
        None => None,
        Some(t) if *t.get_ref() > 0.0 && *t.get_ref() < 100.0 => Some(*t.get_ref() / 100.0),
        Some(t) => {
            return Err(check.at(
                t,
                "target_ci_percent",
                "must be a percentage above 0 and below 100",
            ))
        }
    };
    let max = match &raw.max_repetitions {
        None if target_ci.is_some() => min.max(10),
        None => min,
        // Fewer repetitions asked on the command line: adaptive ones stop at no fewer.
        Some(m) if overrides.repetitions.is_some() => (*m.get_ref() as u32).max(min),
        Some(m) if *m.get_ref() >= min as i64 && *m.get_ref() <= 1000 => *m.get_ref() as u32,
        Some(m) => {
            return Err(check.at(
                m,
                "max_repetitions",
                format!("must be between repetitions ({min}) and 1000"),
            ))
        }
    };
    if let (Some(m), None, true) = (&raw.max_repetitions, target_ci, max > min) {
        return Err(check.at(
            m,
            "max_repetitions",
            "needs target_ci_percent (the stability target that stops repetitions early)",
        ));
    }
    Ok(Repetitions {
        min,
        max,
        target_ci,
    })
}

/// How long a workload may run: 30 minutes unless `timeout` says otherwise (None: `"none"`).
pub(super) fn timeout(check: &Checker<'_>, raw: &PlanFile) -> Result<Option<u64>, PlanError> {
    match &raw.timeout {
        None => Ok(Some(30 * 60 * 1_000_000_000)),
        Some(t) if t.get_ref() == "none" => Ok(None),
        Some(t) => match parse_duration_ns(t.get_ref()) {
            Ok(0) => Err(check.at(t, "timeout", "must be longer than 0 (or \"none\")")),
            Ok(ns) => Ok(Some(ns)),
            Err(e) => Err(check.at(t, "timeout", format!("{e} (or \"none\")"))),
        },
    }
}

/// The scale: `--scale` over the plan's `scale`, 1 when neither says.
pub(super) fn scale(
    check: &Checker<'_>,
    raw: &PlanFile,
    overrides: &Overrides,
) -> Result<f64, PlanError> {
    match (overrides.scale, &raw.scale) {
        (Some(s), _) if s > 0.0 && s <= 1.0 => Ok(s),
        (Some(s), _) => Err(check.flag(
            "--scale",
            format!("must be above 0 and at most 1 (got {s})"),
        )),
        (None, None) => Ok(1.0),
        (None, Some(s)) if *s.get_ref() > 0.0 && *s.get_ref() <= 1.0 => Ok(*s.get_ref()),
        (None, Some(s)) => Err(check.at(s, "scale", "must be above 0 and at most 1")),
    }
}

/// The device as the plan's `[device]` table gives it (an image of a size, or real devices
/// given up with `destroy_data_on`), and whether the loop device uses direct I/O.
pub(super) fn device(check: &Checker<'_>, raw: &PlanFile) -> Result<(DeviceSpec, bool), PlanError> {
    let Some(d) = &raw.device else {
        return Ok((DeviceSpec::Image { size_bytes: None }, true));
    };
    // The acknowledgement of a real device means nothing without that device: a plan that
    // says it but images instead has a mistake in it.
    if let (Some(destroy), None) = (&d.destroy_data_on, &d.block) {
        return Err(check.at(
            destroy,
            "device.destroy_data_on",
            "names a device to destroy, but the plan has no device.block; add block = \"/dev/X\" (the same device) or remove destroy_data_on",
        ));
    }
    let device = match (&d.image, &d.block) {
        (Some(_), Some(b)) => {
            return Err(check.at(
                b,
                "device.block",
                "give either device.image or device.block, not both",
            ))
        }
        (Some(size), None) => {
            let bytes = parse_size(size.get_ref())
                .map_err(|e| check.at(size, "device.image", e.to_string()))?;
            if bytes == 0 {
                return Err(check.at(size, "device.image", "an image needs a size (e.g. \"4g\")"));
            }
            DeviceSpec::Image {
                size_bytes: Some(bytes),
            }
        }
        (None, Some(block)) => DeviceSpec::parse(
            block.get_ref(),
            d.destroy_data_on.as_ref().map(|s| s.get_ref().as_str()),
        )
        .map_err(|e| check.at(block, "device.block", e.to_string()))?,
        (None, None) => DeviceSpec::Image { size_bytes: None },
    };
    Ok((device, !d.loop_buffered.unwrap_or(false)))
}

/// The device the cases run on: the plan's image checked against every filesystem's least
/// size and shrunk with the scale, or a workload command's device as its flags say; with
/// direct I/O on the loop device or not, and where its size is set (for advice).
pub(super) fn sized_device(
    check: &Checker<'_>,
    raw: &PlanFile,
    (device, loop_direct_io): (DeviceSpec, bool),
    filesystems: &[Table<'_>],
    scale: f64,
    overrides: &Overrides,
) -> Result<(DeviceSpec, bool, SizeSetting), PlanError> {
    // An image too small for one of the filesystems could never run: say so now, not after a
    // dry run passed and the campaign started.
    if let (
        DeviceSpec::Image {
            size_bytes: Some(bytes),
        },
        Some(span),
    ) = (&device, raw.device.as_ref().and_then(|d| d.image.as_ref()))
    {
        for table in filesystems {
            fsbench_testbed::device::check_size(
                table.fs.name(),
                *bytes,
                table.fs.min_device_bytes(),
                "the image",
                SizeSetting::Plan,
            )
            .map_err(|e| check.at(span, "device.image", e.to_string()))?;
        }
    }
    // A scaled image shrinks with the plan (in whole MiB), never below what its largest
    // filesystem needs nor below 4 GiB (or the size asked for, if smaller): not every
    // workload's data shrinks with the scale (a mix's file sizes, a task's least tree), and a
    // sparse image costs only what is written to it.
    let device = match device {
        DeviceSpec::Image {
            size_bytes: Some(bytes),
        } if scale < 1.0 => {
            let floor = filesystems
                .iter()
                .map(|t| t.fs.min_device_bytes())
                .max()
                .unwrap_or(0);
            let scaled = ((bytes as f64 * scale) as u64) >> 20 << 20;
            DeviceSpec::Image {
                size_bytes: Some(scaled.max(floor).max(4 << 30).min(bytes)),
            }
        }
        other => other,
    };
    // A workload command's device is as its flags say (never scaled).
    Ok(match &overrides.device {
        Some((device, direct, setting)) => (device.clone(), *direct, *setting),
        None => (device, loop_direct_io, SizeSetting::Plan),
    })
}

/// The plan's one-line description and its notes, each one line.
pub(super) fn words(
    check: &Checker<'_>,
    raw: &PlanFile,
) -> Result<(String, Vec<String>), PlanError> {
    let description = match &raw.description {
        None => String::new(),
        Some(d) if d.get_ref().contains('\n') => {
            return Err(check.at(d, "description", "must be one line"))
        }
        Some(d) => d.get_ref().trim().to_string(),
    };
    let mut notes = Vec::new();
    for note in &raw.notes {
        let text = note.get_ref().trim();
        if text.is_empty() || text.contains('\n') {
            return Err(check.at(note, "notes", "each note is one line of text"));
        }
        notes.push(text.to_string());
    }
    Ok((description, notes))
}

/// When targets are made anew (`remake_target`).
pub(super) fn remake(check: &Checker<'_>, raw: &PlanFile) -> Result<Remake, PlanError> {
    let Some(v) = &raw.remake_target else {
        return Ok(Remake::Sample);
    };
    match v.get_ref() {
        toml::Value::Boolean(true) => Ok(Remake::Sample),
        toml::Value::Boolean(false) => Ok(Remake::Never),
        toml::Value::String(s) if s == "configuration" => Ok(Remake::Configuration),
        _ => Err(check.at(
            v,
            "remake_target",
            "must be true (every sample), \"configuration\" (once per configuration and round) or false (once per case)",
        )),
    }
}

/// One platform: where a configuration runs.
#[derive(Debug, Clone)]
pub(super) struct Platform {
    pub name: String,
    /// The loop image in memory.
    pub ram: bool,
    /// The CPU share of the workload's processes, in percent.
    pub cpu_percent: Option<f64>,
}

/// The plan's platforms (`[platforms.NAME]`), or the one default platform.
pub(super) fn platforms(
    check: &Checker<'_>,
    raw: &PlanFile,
    device: &DeviceSpec,
) -> Result<Vec<Platform>, PlanError> {
    let mut platforms = Vec::new();
    for (name, p) in &raw.platforms {
        check.name(name, "platforms")?;
        let name = name.get_ref();
        let ram = p.ram.unwrap_or(false);
        if ram && matches!(device, DeviceSpec::Block { .. }) {
            return Err(check.whole(
                &format!("platforms.{name}.ram"),
                "puts a loop image in memory, but the plan's device is a real block device: use [device] image = \"SIZE\" or drop ram",
            ));
        }
        let cpu_percent = match &p.cpu_percent {
            None => None,
            Some(c) if *c.get_ref() > 0.0 && *c.get_ref() <= 100.0 => Some(*c.get_ref()),
            Some(c) => {
                return Err(check.at(
                    c,
                    &format!("platforms.{name}.cpu_percent"),
                    "must be a percentage of the machine's CPU time above 0 and at most 100",
                ))
            }
        };
        platforms.push(Platform {
            name: name.clone(),
            ram,
            cpu_percent,
        });
    }
    if platforms.is_empty() {
        platforms.push(Platform {
            name: DEFAULT_PLATFORM.to_string(),
            ram: false,
            cpu_percent: None,
        });
    }
    Ok(platforms)
}

/// The plan's aging specs (`[aging.NAME]`) and the ages its configurations run at (`ages`;
/// by default fresh and every spec).
pub(super) fn ages(
    check: &Checker<'_>,
    raw: &PlanFile,
) -> Result<(BTreeMap<String, AgingSpec>, Vec<String>), PlanError> {
    let agings = aging_specs(check, raw)?;
    let mut ages: Vec<String> = Vec::new();
    for age in &raw.ages {
        let name = age.get_ref();
        if name != FRESH && !agings.contains_key(name) {
            let mut known = vec![FRESH.to_string()];
            known.extend(agings.keys().cloned());
            return Err(check.at(
                age,
                "ages",
                format!(
                    "'{name}' is neither fresh nor an [aging.NAME] table of the plan; it has: {}",
                    known.join(", ")
                ),
            ));
        }
        if !ages.contains(name) {
            ages.push(name.clone());
        }
    }
    if ages.is_empty() {
        ages.push(FRESH.to_string());
        ages.extend(agings.keys().cloned());
    }
    Ok((agings, ages))
}

/// The plan's `[aging.NAME]` tables as specs: every key read by the spec itself (its errors
/// name the key as written), the rest at their defaults.
fn aging_specs(
    check: &Checker<'_>,
    raw: &PlanFile,
) -> Result<BTreeMap<String, AgingSpec>, PlanError> {
    let mut specs = BTreeMap::new();
    for (spanned, table) in &raw.aging {
        check.name(spanned, "aging")?;
        let name = spanned.get_ref();
        if name == FRESH {
            return Err(check.at(
                spanned,
                "aging",
                "`fresh` is the age of a filesystem not aged: give the aging spec another name",
            ));
        }
        let mut spec = AgingSpec::default();
        for (key, value) in table {
            let at = format!("aging.{name}.{}", key.get_ref());
            if !AGING_KEYS.contains(&key.get_ref().as_str()) {
                return Err(check.at(
                    key,
                    &at,
                    format!("unknown key; the keys are {}", AGING_KEYS.join(", ")),
                ));
            }
            let text = match value.get_ref() {
                toml::Value::String(text) => text.clone(),
                toml::Value::Integer(n) => n.to_string(),
                toml::Value::Float(x) => x.to_string(),
                _ => return Err(check.at(value, &at, "must be a number or a string")),
            };
            spec.set(key.get_ref(), &text)
                .map_err(|e| check.at(value, &at, e))?;
        }
        specs.insert(name.clone(), spec);
    }
    Ok(specs)
}

/// The I/O schedulers the configurations run with (one None: the device's own).
pub(super) fn schedulers(
    check: &Checker<'_>,
    raw: &PlanFile,
) -> Result<Vec<Option<String>>, PlanError> {
    let mut schedulers = Vec::new();
    for s in &raw.schedulers {
        let name = s.get_ref().trim();
        if let Some(e) = scheduler_error(name) {
            return Err(check.at(s, "schedulers", e));
        }
        schedulers.push(Some(name.to_string()));
    }
    if schedulers.is_empty() {
        schedulers.push(None);
    }
    Ok(schedulers)
}

/// The cache policies the configurations run with (warm by default).
pub(super) fn caches(check: &Checker<'_>, raw: &PlanFile) -> Result<Vec<CachePolicy>, PlanError> {
    let mut caches = Vec::new();
    for c in &raw.cache {
        caches.push(
            c.get_ref()
                .parse::<CachePolicy>()
                .map_err(|e| check.at(c, "cache", e))?,
        );
    }
    if caches.is_empty() {
        caches.push(CachePolicy::Warm);
    }
    Ok(caches)
}

/// One `[[filesystems]]` table, checked: the filesystem it names, and the array it lays over
/// several devices.
pub(super) struct Table<'a> {
    pub file: &'a crate::file::FilesystemFile,
    pub fs: &'static dyn Filesystem,
    pub array: Option<ArraySpec>,
}

/// The plan's filesystems: each known, its option sets named, options only where there is a
/// filesystem to make, its array one it takes on the device (`real_devices` of them, None on
/// images); a plan without any runs in a directory or is a mistake.
pub(super) fn filesystems<'a>(
    check: &Checker<'_>,
    raw: &'a PlanFile,
    overrides: &Overrides,
    real_devices: Option<usize>,
) -> Result<Vec<Table<'a>>, PlanError> {
    if raw.filesystems.is_empty() && raw.dir.is_none() && overrides.dir.is_none() {
        return Err(check.whole(
            "filesystems",
            "the plan names no filesystem: add a [[filesystems]] table with name = \"ext4\" (or another), or run it in an existing directory (`fsbench run --dir PATH`)",
        ));
    }
    let mut tables = Vec::new();
    for f in &raw.filesystems {
        let Some(fs) = fs::by_name(f.name.get_ref()) else {
            return Err(check.at(
                &f.name,
                "filesystems.name",
                format!(
                    "unknown filesystem '{}'; use one of {}",
                    f.name.get_ref(),
                    fs::names()
                ),
            ));
        };
        for (sets, key) in [
            (&f.mkfs_options, "filesystems.mkfs_options"),
            (&f.mount_options, "filesystems.mount_options"),
        ] {
            for name in sets.iter().flat_map(BTreeMap::keys) {
                check.name(name, key)?;
            }
        }
        // The bare device has nothing to make or mount: options would be silently unused.
        let options = |sets: &Option<OptionSets>| {
            sets.as_ref()
                .is_some_and(|sets| sets.values().any(|o| !o.trim().is_empty()))
        };
        if !fs.capabilities().filesystem && (options(&f.mkfs_options) || options(&f.mount_options))
        {
            return Err(check.at(
                &f.name,
                "filesystems",
                "the bare device has no filesystem to make or mount: drop its mkfs_options \
                 and mount_options",
            ));
        }
        // Whether this filesystem takes the layout on this device: said at its `array` (or,
        // without one, at the devices that need one).
        let array = match &f.array {
            None => None,
            Some(text) => Some(
                text.get_ref()
                    .parse::<ArraySpec>()
                    .map_err(|e| check.at(text, "filesystems.array", e))?,
            ),
        };
        fsbench_testbed::fs::check_layout(fs, array.as_ref(), real_devices).map_err(|e| match (
            &f.array,
            raw.device.as_ref().and_then(|d| d.block.as_ref()),
        ) {
            (Some(text), _) => check.at(text, "filesystems.array", e),
            (None, Some(block)) => check.at(block, "device.block", e),
            (None, None) => check.at(&f.name, "filesystems", e),
        })?;
        tables.push(Table { file: f, fs, array });
    }
    Ok(tables)
}

/// An aged image is made once and copied for every sample: its size must be known before any
/// is made (a default size would follow the free space, which the cache itself takes).
pub(super) fn aged_image(
    check: &Checker<'_>,
    raw: &PlanFile,
    overrides: &Overrides,
    ages: &[String],
    device: &DeviceSpec,
    size_setting: SizeSetting,
) -> Result<(), PlanError> {
    let sized = matches!(
        device,
        DeviceSpec::Image {
            size_bytes: Some(_)
        }
    );
    let in_dir = overrides.dir.is_some() || raw.dir.is_some();
    match ages.iter().find(|a| *a != FRESH) {
        Some(age) if !sized && !in_dir => Err(check.whole(
            &format!("aging.{age}"),
            format!(
                "an aged filesystem is made once, on an image, and copied for every sample: give the image's size ({})",
                size_setting.suggest("SIZE")
            ),
        )),
        _ => Ok(()),
    }
}

/// The directory the plan runs in: the command line's (`--dir`), over the plan's own `dir`;
/// either must be absolute.
pub(super) fn dir(
    check: &Checker<'_>,
    raw: &PlanFile,
    overrides: &Overrides,
) -> Result<Option<PathBuf>, PlanError> {
    let dir = match (overrides.dir.as_deref(), &raw.dir) {
        (Some(given), _) if !given.is_absolute() => {
            return Err(check.flag(
                "--dir",
                format!("{} must be an absolute path", given.display()),
            ))
        }
        (Some(given), _) => Some(given.to_path_buf()),
        (None, own) => own.as_ref().map(|d| PathBuf::from(d.get_ref())),
    };
    if let Some(own) = raw
        .dir
        .as_ref()
        .filter(|d| overrides.dir.is_none() && !Path::new(d.get_ref()).is_absolute())
    {
        return Err(check.at(own, "dir", "must be an absolute path"));
    }
    Ok(dir)
}

/// How often phases' series and the host monitors are taken (`interval`).
pub(super) fn interval(check: &Checker<'_>, raw: &PlanFile) -> Result<SeriesInterval, PlanError> {
    match &raw.interval {
        None => Ok(SeriesInterval::Auto),
        Some(i) => i
            .get_ref()
            .parse()
            .map_err(|e: String| check.at(i, "interval", e)),
    }
}

/// Extra attempts of a sample the host disturbed (`repeat_disturbed`, 0 to 10).
pub(super) fn repeat_disturbed(check: &Checker<'_>, raw: &PlanFile) -> Result<u32, PlanError> {
    match &raw.repeat_disturbed {
        None => Ok(0),
        Some(r) if (0..=10).contains(r.get_ref()) => Ok(*r.get_ref() as u32),
        Some(r) => Err(check.at(
            r,
            "repeat_disturbed",
            "must be between 0 and 10 (extra attempts of a disturbed sample)",
        )),
    }
}

/// What becomes of the cases on md arrays where the kernel has no md (`[device] without_md`):
/// they end unsupported, or run on one image of the array's total size (images only).
pub(super) fn without_md(
    check: &Checker<'_>,
    raw: &PlanFile,
    device: &DeviceSpec,
) -> Result<WithoutMd, PlanError> {
    let Some(w) = raw.device.as_ref().and_then(|d| d.without_md.as_ref()) else {
        return Ok(WithoutMd::Unsupported);
    };
    match w.get_ref().as_str() {
        "unsupported" => Ok(WithoutMd::Unsupported),
        "one-device" if matches!(device, DeviceSpec::Image { .. }) => Ok(WithoutMd::OneDevice),
        "one-device" => Err(check.at(
            w,
            "device.without_md",
            "\"one-device\" runs an md array's cases on one image of its total size; real devices (device.block) are one per member: drop without_md",
        )),
        other => Err(check.at(
            w,
            "device.without_md",
            format!(
                "'{other}': use \"one-device\" (where the kernel has no md, the cases on md arrays run on one image of the array's total size) or \"unsupported\" (the default: they end unsupported)"
            ),
        )),
    }
}
