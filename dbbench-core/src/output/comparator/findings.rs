//! What a comparison compared and what it did not, gathered over a run's snapshots for the
//! console's one line: apart from the comparison because it is only its tally.

/// What a comparison compared and what it did not.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Findings {
    /// Ratios judged (both sides had one and neither was busy).
    pub ratios: usize,
    /// Timing blocks whose seconds were compared (this machine, neither side busy).
    pub seconds: usize,
    /// The drift between machines the ratios were judged with, when any was judged.
    pub drift: Option<f64>,
    /// The smallest and largest factor by which a judged ratio had to move to fail
    /// (`exp` of the rule's bound, `ratio::bound`): what the check can find.
    pub finds_beyond: Option<(f64, f64)>,
    /// `cells[test_1].timing: seconds not compared: another machine (…)`: every measurement
    /// left unjudged, and why.
    pub notes: Vec<String>,
}

impl Findings {
    /// Adds another comparison's findings.
    pub fn extend(&mut self, other: Findings) {
        self.ratios += other.ratios;
        self.seconds += other.seconds;
        self.drift = self.drift.or(other.drift);
        if let Some((low, high)) = other.finds_beyond {
            self.found_beyond(low);
            self.found_beyond(high);
        }
        self.notes.extend(other.notes);
    }

    /// Counts one judged ratio that had to move by more than the factor `beyond` to fail.
    pub fn found_beyond(&mut self, beyond: f64) {
        self.finds_beyond = Some(match self.finds_beyond {
            None => (beyond, beyond),
            Some((low, high)) => (low.min(beyond), high.max(beyond)),
        });
    }

    /// One phrase for the console: "compared: ratios of 5 cells; seconds not compared for
    /// test_1, …: another machine (commit ×1.68, fsync ×1.57)"; `None` when the snapshot holds
    /// no measurements (smoke scale).
    pub fn describe(&self) -> Option<String> {
        let mut compared = Vec::new();
        if self.ratios > 0 {
            let drift = self.drift.map_or(String::new(), |tau| {
                format!(
                    ", allowing for a drift between machines of τ = {tau} (assumed: our VM's; \
                     DBBENCH_SNAPSHOT_DRIFT)"
                )
            });
            let power = self.finds_beyond.map_or(String::new(), |(low, high)| {
                let range = if format!("{low:.2}") == format!("{high:.2}") {
                    format!("×{low:.2}")
                } else {
                    format!("×{low:.2}–{high:.2}")
                };
                format!("; a ratio fails only once it moves by more than {range} either way")
            });
            compared.push(format!("ratios of {} cells{drift}{power}", self.ratios));
        }
        if self.seconds > 0 {
            compared.push(format!("seconds of {} cells (this machine)", self.seconds));
        }
        let mut parts = Vec::new();
        if !compared.is_empty() {
            parts.push(format!("compared: {}", compared.join(", ")));
        } else if !self.notes.is_empty() {
            parts.push("compared: deterministic fields only".to_string());
        }
        // `cells[test_1].timing: seconds not compared: why` → ("seconds not compared", why, test_1)
        let mut reasons: Vec<(String, String, Vec<String>)> = Vec::new();
        for note in &self.notes {
            let (path, rest) = note.split_once(": ").unwrap_or(("", note.as_str()));
            let (what, why) = rest.split_once(": ").unwrap_or((rest, ""));
            // How busy each cell was differs cell by cell; the summary above the line and the
            // main job's warning give the counts, so one phrase covers every busy cell.
            let why = if why.starts_with("inconclusive: ") {
                "inconclusive: the machine was busy (this run's or the recording's)"
            } else {
                why
            };
            let cell = path
                .split_once('[')
                .and_then(|(_, rest)| rest.split_once(']'))
                .map_or(path, |(cell, _)| cell)
                .to_string();
            match reasons.iter_mut().find(|(w, r, _)| w == what && r == why) {
                Some((_, _, cells)) => cells.push(cell),
                None => reasons.push((what.to_string(), why.to_string(), vec![cell])),
            }
        }
        parts.extend(reasons.into_iter().map(|(what, why, cells)| {
            if why.is_empty() {
                format!("{what} for {}", cells.join(", "))
            } else {
                format!("{what} for {}: {why}", cells.join(", "))
            }
        }));
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}
