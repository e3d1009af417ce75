//! The cells' order in each round: a Williams design (Williams 1949, *Experimental designs
//! balanced for the estimation of residual effects of treatments*), in which every cell follows
//! every other cell equally often, so that what a repetition leaves behind for the next (the
//! kernel freeing a teardown's blocks, write-back, a warm cache) falls on every cell alike over
//! the rounds instead of always on the same one. For an even number of cells `k` it is `k`
//! sequences; for an odd `k`, those and their mirror images, `2k`.

/// The sequences of a Williams design for `k` cells; round `r` runs sequence `r % len`.
pub fn williams(k: usize) -> Vec<Vec<usize>> {
    if k <= 1 {
        return vec![(0..k).collect()];
    }
    // The first row 0, 1, k−1, 2, k−2, …; row i adds i to every entry (mod k).
    let mut first = Vec::with_capacity(k);
    let (mut low, mut high) = (0usize, k);
    for j in 0..k {
        if j % 2 == 0 {
            first.push(low);
            low += 1;
        } else {
            high -= 1;
            first.push(high);
        }
    }
    let rows: Vec<Vec<usize>> = (0..k)
        .map(|i| first.iter().map(|c| (c + i) % k).collect())
        .collect();
    if k.is_multiple_of(2) {
        return rows;
    }
    let mirrored: Vec<Vec<usize>> = rows
        .iter()
        .map(|r| r.iter().rev().copied().collect())
        .collect();
    rows.into_iter().chain(mirrored).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How often each ordered pair (a right before b) occurs, and each cell in each position.
    fn counts(rows: &[Vec<usize>], k: usize) -> (Vec<Vec<u32>>, Vec<Vec<u32>>) {
        let mut follows = vec![vec![0; k]; k];
        let mut position = vec![vec![0; k]; k];
        for row in rows {
            for (p, &c) in row.iter().enumerate() {
                position[c][p] += 1;
            }
            for w in row.windows(2) {
                follows[w[0]][w[1]] += 1;
            }
        }
        (follows, position)
    }

    #[test]
    fn every_cell_follows_every_other_equally_often_and_takes_every_position() {
        for k in 2..=8 {
            let rows = williams(k);
            assert_eq!(
                rows.len(),
                if k.is_multiple_of(2) { k } else { 2 * k },
                "k = {k}"
            );
            for row in &rows {
                let mut sorted = row.clone();
                sorted.sort();
                assert_eq!(sorted, (0..k).collect::<Vec<_>>(), "a permutation");
            }
            let (follows, position) = counts(&rows, k);
            let per_pair = follows[0][1];
            for (a, row) in follows.iter().enumerate() {
                for (b, n) in row.iter().enumerate() {
                    let want = if a == b { 0 } else { per_pair };
                    assert_eq!(*n, want, "k = {k}: {a} before {b}");
                }
            }
            let per_position = position[0][0];
            assert!(
                position.iter().flatten().all(|n| *n == per_position),
                "k = {k}"
            );
        }
    }

    #[test]
    fn a_fixed_order_is_not_balanced() {
        // The check above fails for the order every round ran in before: 0, 1, …, k−1.
        let rows: Vec<Vec<usize>> = vec![(0..5).collect(); 10];
        let (follows, _) = counts(&rows, 5);
        assert_ne!(follows[0][1], follows[1][0]);
    }
}
