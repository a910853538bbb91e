//! What this host makes of a parsed plan, asked of it through `System` (so tests can fake it):
//! the workloads' notes on it, and the md arrays where its kernel has none. Apart from
//! parsing, which asks the host nothing of the kind.

use super::{Case, Plan, WithoutMd};
use fsbench_testbed::array::ArraySpec;
use fsbench_testbed::System;
use fsbench_workload::workload::HostNotes;
use fsbench_workload::Context;

impl Plan {
    /// The plan as this host will run it: the notes of what it makes of the workloads (a
    /// study's file or program missing here, and what runs instead), once each after the
    /// plan's own; and where the kernel has no md (`system` says), the cases on md arrays on
    /// one device each (`without_md = "one-device"`, said in a note) or a note that they end
    /// unsupported. The cases, their keys and their number stay as parsed.
    pub fn on_host(mut self, system: &dyn System) -> Plan {
        let ctx = Context {
            scale: self.scale,
            ..Context::default()
        };
        for workload in &self.workloads {
            for note in workload.settings.apply(HostNotes(&ctx)) {
                if !self.notes.contains(&note) {
                    self.notes.push(note);
                }
            }
        }
        self.md_on(system);
        self
    }

    /// The md arrays of the plan on a host whose kernel (or mdadm) cannot make them, once.
    fn md_on(&mut self, system: &dyn System) {
        let on_md = |c: &Case| {
            c.config
                .array
                .as_deref()
                .is_some_and(|a| a.parse::<ArraySpec>().is_ok_and(|a| a.by_md()))
        };
        if self.dir.is_some() || !self.cases.iter().any(on_md) {
            return;
        }
        let reasons = fsbench_testbed::array::md_support(system);
        if reasons.is_empty() {
            // This host has md: the arrays as asked.
            return;
        }
        if self.without_md == WithoutMd::Unsupported {
            self.notes.push(format!(
                "md RAID cannot be made on this host, so the cases on md arrays end unsupported: {}",
                reasons.join("; ")
            ));
            return;
        }
        let mut arrays: Vec<String> = Vec::new();
        for case in self.cases.iter_mut().filter(|c| on_md(c)) {
            let array = case.config.array.take().expect("on md");
            if !arrays.contains(&array) {
                arrays.push(array.clone());
            }
            case.config.one_device_for = Some(array);
        }
        self.notes.push(format!(
            "{}: the cases on md arrays ({}) run on one image of the array's total size ({})",
            fsbench_model::NO_MD,
            arrays.join(", "),
            reasons.join("; ")
        ));
    }
}
