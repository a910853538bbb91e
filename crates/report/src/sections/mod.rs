//! The sections of a report, each one module with its data and its output in every format it
//! appears in (a `crate::section::Section`: the terminal summary, the Markdown, the HTML and,
//! where it has one, the workbook's sheet and the JSON), and their one registration,
//! [`SECTIONS`]: where each output places each section. A renderer lays out its own parts and
//! calls the sections' hooks in its order; a new section is its module and its line there.
//!
//! - [`standings`]: the verdict per discipline and the ranking.
//! - [`efficiency`]: each filesystem against its bare device.
//! - [`aging`]: aged against fresh.
//! - [`durability`]: the promises each configuration kept when it was cut.
//! - [`marks`]: the samples whose figures the host disturbed or that did not settle.
//! - [`then_now`]: a study's figures and claims then and now.
//! - [`not_measured`]: what was not measured, and why.

pub mod aging;
pub mod durability;
pub mod efficiency;
pub mod marks;
pub mod not_measured;
pub mod standings;
pub mod then_now;

use crate::findings::Findings;
use crate::section::Section;
use standings::Standings;

/// The outputs sections appear in, in the order of [`Placed::ranks`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Terminal,
    Markdown,
    Html,
    Workbook,
    Json,
}

/// Which part of the terminal summary, the Markdown and the HTML page a section is in (the
/// terminal and the workbook order by rank alone; the terminal tells its answer apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The answer: the verdict and what reads with it, only when there is a verdict
    /// ([`answered`]; in the terminal, only in a campaign's summary).
    Answer,
    /// Before the output's own body (the Markdown's configurations, the page's charts).
    Head,
    /// After it.
    Tail,
}

/// A registered section and where the outputs place it.
pub struct Placed {
    pub section: &'static dyn Section,
    pub part: Part,
    /// Its rank in each output, lower first: `[terminal, markdown, html, workbook, json]`
    /// (`rank`; 0: not in it), ten apart so that a section goes between two by its own line. A
    /// renderer's own fragments take ranks between (the page's run against run).
    pub ranks: [u8; 5],
}

impl Placed {
    /// Its rank in `output`.
    pub fn rank(&self, output: Output) -> u8 {
        self.ranks[output as usize]
    }
}

/// Every section, and where each output places it (0: not in it).
#[rustfmt::skip]
pub static SECTIONS: [Placed; 8] = [
    // The section,                          its part,     its ranks: term, md, html, xlsx, json
    placed(&standings::VerdictSection,        Part::Answer, [20, 10, 10, 10, 10]),
    placed(&efficiency::EfficiencySection,    Part::Answer, [30, 20, 20,  0, 20]),
    placed(&standings::RankingSection,        Part::Answer, [40, 30, 30, 20,  0]),
    placed(&durability::DurabilitySection,    Part::Head,   [45, 35, 35, 25, 25]),
    placed(&aging::AgingSection,              Part::Head,   [60, 40, 40,  0,  0]),
    placed(&marks::MarksSection,              Part::Head,   [ 0,  0, 50,  0,  0]),
    placed(&then_now::ThenNowSection,         Part::Head,   [50, 50, 70, 40, 30]),
    placed(&not_measured::NotMeasuredSection, Part::Tail,   [10, 60, 80, 30,  0]),
];

const fn placed(section: &'static dyn Section, part: Part, ranks: [u8; 5]) -> Placed {
    Placed {
        section,
        part,
        ranks,
    }
}

/// The sections `output` places, in its order.
pub fn ordered(output: Output) -> Vec<&'static Placed> {
    let mut placed: Vec<&Placed> = SECTIONS.iter().filter(|p| p.rank(output) > 0).collect();
    placed.sort_by_key(|p| p.rank(output));
    placed
}

/// Whether there is a verdict: the [`Part::Answer`] is only placed then.
pub fn answered(findings: &Findings) -> bool {
    !findings.get::<Standings>().disciplines.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every section has its own name, and each output places the sections it has in an order
    /// of its own: no two share a rank, nor take the page's run against run's.
    #[test]
    fn each_output_orders_its_sections() {
        let mut names: Vec<&str> = SECTIONS.iter().map(|p| p.section.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), SECTIONS.len());
        for output in [
            Output::Terminal,
            Output::Markdown,
            Output::Html,
            Output::Workbook,
            Output::Json,
        ] {
            let mut ranks: Vec<u8> = ordered(output).iter().map(|p| p.rank(output)).collect();
            if output == Output::Html {
                ranks.push(crate::html::VERSUS);
            }
            let all = ranks.len();
            ranks.sort();
            ranks.dedup();
            assert_eq!(ranks.len(), all, "{output:?}");
        }
    }
}
