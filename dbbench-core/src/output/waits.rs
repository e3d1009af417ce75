//! A cell's waits as the VLF article tabulates them: wait type, wait time, its percentage of all
//! wait time and the running percentage, largest first, over the cell's measured runs. Only
//! backends with wait statistics (SQL Server, PostgreSQL's sampled wait events) have any.

use crate::analysis::metrics::top_waits;
use crate::model::results::CellResult;
use crate::util::grid::{Align, Grid};
use std::collections::BTreeMap;

/// The table of `cell`'s ten largest waits; `None` when it recorded none.
pub fn table(cell: &CellResult) -> Option<Grid> {
    let shares = top_waits(cell, 10);
    if shares.is_empty() {
        return None;
    }
    let mut seconds: BTreeMap<&str, f64> = BTreeMap::new();
    for run in cell.measured() {
        for w in &run.waits {
            *seconds.entry(&w.wait_type).or_default() += w.wait_time_s;
        }
    }
    let mut grid = Grid::default();
    grid.column("wait type", Align::Left);
    grid.column("wait time", Align::Right);
    grid.column("percentage", Align::Right);
    grid.column("running percentage", Align::Right);
    let mut running = 0.0;
    for (name, pct) in &shares {
        running += pct;
        grid.row(vec![
            name.clone(),
            format!(
                "{:.2} s",
                seconds.get(name.as_str()).copied().unwrap_or(0.0)
            ),
            format!("{pct:.2}%"),
            format!("{running:.2}%"),
        ]);
    }
    Some(grid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_add_up_to_the_running_percentage() {
        let result = crate::model::sample::vlf();
        let text = table(&result.cells[0]).unwrap().to_text("");
        let first = text.lines().nth(2).unwrap();
        assert!(first.starts_with("WRITELOG"), "{text}");
        let last = text.lines().last().unwrap();
        assert!(last.trim_end().ends_with("100.00%"), "{text}");
        let mut quiet = result.cells[0].clone();
        quiet.runs.iter_mut().for_each(|r| r.waits.clear());
        assert!(table(&quiet).is_none());
    }
}
