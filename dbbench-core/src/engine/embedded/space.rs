//! What an embedded database will put on each volume before its body runs: the data files at
//! their declared size, the log at its pre-grown size, and the fixture's rows, estimated from
//! their measured size in SQLite. The runner compares this with the free space
//! (`util::space`) before the cell creates anything.
//!
//! A file that the fixture fills to (or near) its size grows before the body has done much: the
//! load itself grows it in whole increments, and the body's first writes add the next one. So
//! such a file needs its growths too, at least the first: a 1 MB data file with a 1 TB growth
//! needs 1 TB once the fixture fills it, not 1 MB. The body's own growth beyond that is not
//! estimated: it depends on what the body does, which no plan says.

use crate::model::plan::DatabasePlan;
use crate::model::units::format_bytes;
use crate::util::space::Need;
use dbbench_options::size::Growth;

/// Bytes one row of the credit fixture's `charge` takes in SQLite with 8 KiB pages: 40 measured
/// (200,000 rows of the fixture's columns, file size / rows), with a fifth added for the page
/// fill of a real load.
pub const CHARGE_ROW_BYTES: u64 = 48;

/// A file counts as full at the start when what it holds before the body is at least this share
/// of its size: the first of the body's writes then grows it.
const NEAR_FULL: f64 = 0.9;

/// Past this many percent growths the file is taken at the content's size: a tiny percent of a
/// tiny file would otherwise take millions of steps to reach a large content.
const MAX_STEPS: u64 = 10_000;

/// A file's size once it holds what is put in it before the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Grown {
    /// Its size then.
    bytes: u64,
    /// How many growths got it there (0: it never fills up).
    growths: u64,
}

/// A file created at `size` bytes that holds `content` bytes before the body, growing by
/// `rule`: its declared size while the content leaves more than a tenth of it free; otherwise
/// the growths that make room for the content, and at least the first one.
fn grown(size: u64, content: u64, rule: Growth) -> Grown {
    if (content as f64) < size as f64 * NEAR_FULL {
        return Grown {
            bytes: size,
            growths: 0,
        };
    }
    let mut bytes = size;
    let mut growths = 0;
    while growths == 0 || bytes < content {
        let Some(step) = rule.increment(bytes) else {
            // A file that may not grow fails when it fills; it needs no more than its size.
            return Grown {
                bytes: bytes.max(content),
                growths,
            };
        };
        if let Growth::Fixed(_) = rule {
            // Fixed steps: all of them at once.
            let steps = content.saturating_sub(bytes).div_ceil(step).max(1);
            return Grown {
                bytes: bytes.saturating_add(steps.saturating_mul(step)),
                growths: growths + steps,
            };
        }
        if growths >= MAX_STEPS {
            return Grown {
                bytes: bytes.max(content),
                growths,
            };
        }
        bytes = bytes.saturating_add(step);
        growths += 1;
    }
    Grown { bytes, growths }
}

/// What a need is, ending where its total follows: `data_1 with the fixture, grown by its first
/// growth of 1.0 TB to`.
fn what(file: &str, fixture: bool, grown: Grown, rule: Growth, size: u64) -> String {
    let with = if fixture {
        format!("{file} with the fixture")
    } else {
        file.to_string()
    };
    let by = match rule {
        Growth::Fixed(_) => format_bytes(rule.increment(size).unwrap_or(0)),
        _ => rule.describe(),
    };
    match grown.growths {
        0 => with,
        1 => format!("{with}, grown by its first growth of {by} to"),
        n => format!("{with}, grown {n} times by {by} to"),
    }
}

/// The space `plan` needs per directory, with a fixture of `fixture_rows` rows; nothing when the
/// plan cannot be laid out (an unbound volume), which creation then reports.
pub fn needs(plan: &DatabasePlan, fixture_rows: u64) -> Vec<Need> {
    let dir = crate::util::paths::database_dir(&plan.work_dir, &plan.name);
    let anchor = dir.join(format!("{}.db", plan.name));
    let Ok(layout) = crate::engine::embedded::storage::plan::LayoutPlan::new(
        &anchor,
        &plan.storage,
        &plan.volumes,
    ) else {
        return Vec::new();
    };
    let fixture = fixture_rows.saturating_mul(CHARGE_ROW_BYTES);
    let files = layout.data.len().max(1) as u64;
    let parent = |p: &std::path::Path| p.parent().unwrap_or(&dir).to_path_buf();
    let mut needs: Vec<Need> = layout
        .data
        .iter()
        .map(|file| {
            // Proportional fill spreads the fixture over the files.
            let data = grown(layout.data_file_bytes, fixture / files, layout.growth);
            Need {
                dir: parent(&file.path),
                bytes: data.bytes,
                what: what(
                    &file.name,
                    fixture > 0,
                    data,
                    layout.growth,
                    layout.data_file_bytes,
                ),
            }
        })
        .collect();
    // The fixture is loaded in one transaction, so the log holds all of it before the
    // checkpoint; it never shrinks below its pre-grown size.
    let log_size = layout.log_target_bytes.max(layout.log_initial_bytes);
    let log = grown(log_size, fixture, layout.log_growth);
    needs.push(Need {
        dir: parent(&layout.log.path),
        bytes: log.bytes,
        what: match log.growths {
            0 => "log, pre-grown".to_string(),
            _ => what("log", true, log, layout.log_growth, log_size),
        },
    });
    needs
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_file_with_room_needs_its_size() {
        let g = grown(MIB, MIB / 2, Growth::Fixed(1 << 40));
        assert_eq!(
            g,
            Grown {
                bytes: MIB,
                growths: 0
            }
        );
        assert_eq!(
            what("data_1", true, g, Growth::Fixed(1 << 40), MIB),
            "data_1 with the fixture"
        );
    }

    #[test]
    fn a_file_filled_to_near_its_size_needs_its_first_growth() {
        let tb = 1u64 << 40;
        let g = grown(MIB, MIB * 95 / 100, Growth::Fixed(tb));
        assert_eq!(
            g,
            Grown {
                bytes: MIB + tb,
                growths: 1
            }
        );
        assert_eq!(
            what("data_1", true, g, Growth::Fixed(tb), MIB),
            "data_1 with the fixture, grown by its first growth of 1.0 TB to"
        );
        // Exactly full is full too.
        assert_eq!(grown(MIB, MIB, Growth::Fixed(tb)).growths, 1);
    }

    #[test]
    fn a_fixture_larger_than_the_file_takes_whole_growths() {
        let g = grown(MIB, 5 * MIB + 1, Growth::Fixed(MIB));
        assert_eq!(
            g,
            Grown {
                bytes: 6 * MIB,
                growths: 5
            }
        );
        assert_eq!(
            what("data_1", true, g, Growth::Fixed(MIB), MIB),
            "data_1 with the fixture, grown 5 times by 1.0 MB to"
        );
        // 10% of 1 MiB is 1.6 extents, rounded up to two: 1 MiB + 128 KiB, and so on.
        let g = grown(MIB, MIB + 200 * 1024, Growth::Percent(10));
        assert_eq!(g.growths, 2);
        assert!(g.bytes >= MIB + 200 * 1024 && g.bytes < 2 * MIB, "{g:?}");
        // A file that may not grow needs what it would hold; it fails when it fills.
        assert_eq!(
            grown(MIB, 3 * MIB, Growth::None),
            Grown {
                bytes: 3 * MIB,
                growths: 0
            }
        );
    }
}
