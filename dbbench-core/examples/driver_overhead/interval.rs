//! The summary statistic: the geometric mean of per-round ratios with its 95% confidence
//! interval, from Student's t on the log ratios.

/// Two-sided 95% quantile of Student's t with `df` degrees of freedom (1.96 beyond the table).
fn t95(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    TABLE.get(df.wrapping_sub(1)).copied().unwrap_or(1.96)
}

/// Geometric mean of `ratios` with its 95% interval.
pub fn geometric_interval(ratios: &[f64]) -> (f64, f64, f64) {
    let n = ratios.len() as f64;
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let mean = logs.iter().sum::<f64>() / n;
    if ratios.len() < 2 {
        return (mean.exp(), f64::NAN, f64::NAN);
    }
    let var = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let half = t95(ratios.len() - 1) * (var / n).sqrt();
    (mean.exp(), (mean - half).exp(), (mean + half).exp())
}
