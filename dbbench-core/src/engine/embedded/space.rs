//! What an embedded database will put on each volume before its body runs: the data files at
//! their declared size, the log at its pre-grown size, and the fixture's rows, estimated from
//! their measured size in SQLite. The runner compares this with the free space
//! ([`crate::util::space`]) before the cell creates anything.
//!
//! The body's own growth is not estimated: it depends on what the body does, which no plan says.

use crate::engine::DatabasePlan;
use crate::util::space::Need;

/// Bytes one row of the credit fixture's `charge` takes in SQLite with 8 KiB pages: 40 measured
/// (200,000 rows of the fixture's columns, file size / rows), with a fifth added for the page
/// fill of a real load.
pub const CHARGE_ROW_BYTES: u64 = 48;

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
        .map(|file| Need {
            dir: parent(&file.path),
            // Proportional fill spreads the fixture over the files; a file holds at least its
            // declared size.
            bytes: layout.data_file_bytes.max(fixture / files),
            what: if fixture > 0 {
                format!("{} with the fixture", file.name)
            } else {
                file.name.clone()
            },
        })
        .collect();
    needs.push(Need {
        dir: parent(&layout.log.path),
        // The fixture is loaded in one transaction, so the log holds all of it before the
        // checkpoint; it never shrinks below its pre-grown size.
        bytes: layout
            .log_target_bytes
            .max(layout.log_initial_bytes)
            .max(fixture),
        what: "log, pre-grown".to_string(),
    });
    needs
}
