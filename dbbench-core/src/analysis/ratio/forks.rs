//! The rounds two cells of one invocation both ran, paired and grouped by fork, and what the
//! forks' log-ratios give: their means and their variance components. Apart from the ratio
//! because the precision target and the components' report read forks without a ratio.

use crate::model::results::CellResult;

/// `(cell, baseline)` elapsed times of every measured round, when both cells come from one
/// invocation and ran exactly the same rounds; `None` otherwise (a partial rerun, a cell that
/// failed part-way).
pub(super) fn rounds_of(cell: &CellResult, baseline: &CellResult) -> Option<Vec<(f64, f64)>> {
    if cell.invocation != baseline.invocation {
        return None;
    }
    let mut c: Vec<(u32, f64)> = cell.measured().map(|r| (r.index, r.elapsed_s)).collect();
    let mut b: Vec<(u32, f64)> = baseline
        .measured()
        .map(|r| (r.index, r.elapsed_s))
        .collect();
    c.sort_by_key(|r| r.0);
    b.sort_by_key(|r| r.0);
    let same = c.len() == b.len() && c.iter().zip(&b).all(|(x, y)| x.0 == y.0);
    same.then(|| c.iter().zip(&b).map(|(x, y)| (x.1, y.1)).collect())
}

/// Each fork's mean log-ratio; `None` when a time is not positive or a fork is empty.
pub fn fork_means(forks: &[Vec<(f64, f64)>]) -> Option<Vec<f64>> {
    forks
        .iter()
        .map(|pairs| {
            if pairs.is_empty()
                || pairs
                    .iter()
                    .any(|&(c, b)| !(c > 0.0 && b > 0.0 && c.is_finite()))
            {
                return None;
            }
            Some(pairs.iter().map(|&(c, b)| (c / b).ln()).sum::<f64>() / pairs.len() as f64)
        })
        .collect()
}

/// `(cell, baseline)` times of every measured round grouped by fork, in fork order, when both
/// cells come from one invocation, ran exactly the same rounds and every round records its
/// fork; `None` otherwise (results written before forks, a partial rerun).
pub fn forks_of(cell: &CellResult, baseline: &CellResult) -> Option<Vec<Vec<(f64, f64)>>> {
    let rounds = rounds_of(cell, baseline)?;
    let forks: Vec<u32> = {
        let mut c: Vec<(u32, Option<u32>)> = cell.measured().map(|r| (r.index, r.fork)).collect();
        c.sort_by_key(|r| r.0);
        c.into_iter().map(|r| r.1).collect::<Option<Vec<u32>>>()?
    };
    let mut grouped: std::collections::BTreeMap<u32, Vec<(f64, f64)>> = Default::default();
    for (fork, pair) in forks.into_iter().zip(rounds) {
        grouped.entry(fork).or_default().push(pair);
    }
    (!grouped.is_empty()).then(|| grouped.into_values().collect())
}

/// The variance components of the log-ratio over the first `pilot` of `forks` (each with two or
/// more rounds to tell them apart): the variance of a round within its fork, pooled, and the
/// variance between the forks' true means (the forks' means' variance less what the rounds'
/// spread puts in it, not below 0). `None` without two forks of two rounds.
pub fn components(forks: &[Vec<(f64, f64)>], pilot: usize) -> Option<(f64, f64)> {
    let forks: Vec<&Vec<(f64, f64)>> = forks.iter().take(pilot.max(2)).collect();
    let usable: Vec<Vec<f64>> = forks
        .iter()
        .filter(|p| p.len() >= 2)
        .map(|p| p.iter().map(|&(c, b)| (c / b).ln()).collect())
        .collect();
    if usable.len() < 2 || usable.iter().flatten().any(|d| !d.is_finite()) {
        return None;
    }
    let (mut ss, mut df, mut means, mut inv_n) = (0.0, 0usize, Vec::new(), 0.0);
    for d in &usable {
        let m = d.iter().sum::<f64>() / d.len() as f64;
        ss += d.iter().map(|x| (x - m).powi(2)).sum::<f64>();
        df += d.len() - 1;
        means.push(m);
        inv_n += 1.0 / d.len() as f64;
    }
    let within = ss / df as f64;
    let k = means.len() as f64;
    let grand = means.iter().sum::<f64>() / k;
    let of_means = means.iter().map(|m| (m - grand).powi(2)).sum::<f64>() / (k - 1.0);
    Some((within, (of_means - within * inv_n / k).max(0.0)))
}
