use super::*;

fn ratio(cell: &[f64], baseline: &[f64]) -> Ratio {
    Ratio::welch(
        &Summary::of(cell).unwrap(),
        &Summary::of(baseline).unwrap(),
        Margin::DEFAULT,
    )
    .unwrap()
}

#[test]
fn doubled_time_with_equal_cv_has_the_textbook_interval() {
    // Equal squared CVs of the means and n = 3 on both sides give Welch df = 2(n-1) = 4, so
    // the interval is exp(ln 2 ± 2.7764451 · sqrt(1/300 + 4/1200)).
    let r = ratio(&[18.0, 20.0, 22.0], &[9.0, 10.0, 11.0]);
    assert!((r.ratio - 2.0).abs() < 1e-12);
    let ci = r.ci.unwrap();
    assert!((ci.low - 1.594_326_5).abs() < 1e-6, "{ci:?}");
    assert!((ci.high - 2.508_896_4).abs() < 1e-6, "{ci:?}");
    assert_eq!(r.verdict, Verdict::Slower);
}

#[test]
fn the_interval_is_mirrored_when_the_roles_swap() {
    let ab = ratio(&[18.0, 20.0, 22.0], &[9.0, 10.0, 11.0]);
    let ba = ratio(&[9.0, 10.0, 11.0], &[18.0, 20.0, 22.0]);
    let (ab, ba) = (ab.ci.unwrap(), ba.ci.unwrap());
    assert!((ab.low * ba.high - 1.0).abs() < 1e-12);
    assert!((ab.high * ba.low - 1.0).abs() < 1e-12);
    assert_eq!(
        ratio(&[9.0, 10.0, 11.0], &[18.0, 20.0, 22.0]).verdict,
        Verdict::Faster
    );
}

#[test]
fn a_wide_interval_around_one_is_inconclusive_a_narrow_one_equivalent() {
    let r = ratio(&[11.0, 9.0, 10.5], &[10.0, 12.0, 8.0]);
    assert_eq!(r.verdict, Verdict::Imprecise);
    assert!(r.ci.unwrap().contains(1.0));
    assert!(
        r.verdict_text().starts_with("inconclusive: [0.") && r.verdict_text().ends_with("±10%"),
        "{}",
        r.verdict_text()
    );
    let r = ratio(&[10.0, 10.1, 9.9, 10.0], &[10.05, 9.95, 10.0, 10.0]);
    assert_eq!(r.verdict, Verdict::Equivalent, "{r:?}");
    assert_eq!(r.verdict_text(), "equivalent (within ±10%)");
    // The same runs against a 0.1% margin cannot be called equivalent.
    let s = |v: &[f64]| Summary::of(v).unwrap();
    let strict = Ratio::welch(
        &s(&[10.0, 10.1, 9.9, 10.0]),
        &s(&[10.05, 9.95, 10.0, 10.0]),
        Margin(0.001),
    )
    .unwrap();
    assert_eq!(strict.verdict, Verdict::Imprecise);
}

#[test]
fn paired_rounds_cancel_what_a_round_shares() {
    // Round effects of ±30% move both cells together: Welch sees the spread, the paired
    // interval sees the steady 0.8.
    let pairs = [(0.80, 1.0), (1.05, 1.30), (0.57, 0.70), (0.81, 1.0)];
    let paired = Ratio::paired(&pairs, Margin::DEFAULT).unwrap();
    assert_eq!(paired.method, Method::Paired);
    assert_eq!(paired.verdict, Verdict::Faster, "{paired:?}");
    assert!(paired.relative_half_width().unwrap() < 0.02, "{paired:?}");
    let s = |v: Vec<f64>| Summary::of(&v).unwrap();
    let welch = Ratio::welch(
        &s(pairs.iter().map(|p| p.0).collect()),
        &s(pairs.iter().map(|p| p.1).collect()),
        Margin::DEFAULT,
    )
    .unwrap();
    assert_eq!(welch.verdict, Verdict::Imprecise, "{welch:?}");
    // exp(mean ln) of 0.8, 0.8077, 0.8143, 0.81.
    assert!((paired.ratio - 0.808).abs() < 0.001, "{}", paired.ratio);
}

#[test]
fn the_paired_interval_is_the_t_interval_of_the_log_ratios() {
    // ln ratios 0, ln 2: mean ln √2, sd ln 2 / √2, se ln 2 / 2, t(0.975, 1) = 12.706.
    let r = Ratio::paired(&[(1.0, 1.0), (2.0, 1.0)], Margin::DEFAULT).unwrap();
    let half = 12.706_204_7 * 2f64.ln() / 2.0;
    let ci = r.ci.unwrap();
    assert!((r.ratio - 2f64.sqrt()).abs() < 1e-12);
    assert!(
        (ci.low.ln() - (2f64.sqrt().ln() - half)).abs() < 1e-6,
        "{ci:?}"
    );
    assert!(
        (ci.high.ln() - (2f64.sqrt().ln() + half)).abs() < 1e-6,
        "{ci:?}"
    );
    assert!(Ratio::paired(&[(1.0, 0.0)], Margin::DEFAULT).is_none());
    assert_eq!(
        Ratio::paired(&[(1.0, 2.0)], Margin::DEFAULT)
            .unwrap()
            .verdict,
        Verdict::TooFewRuns
    );
}

#[test]
fn margins_parse_as_the_comparator_s_tolerance() {
    assert_eq!(Margin::parse("10%"), Some(Margin(0.10)));
    assert_eq!(Margin::parse(" 0.05 "), Some(Margin(0.05)));
    assert_eq!(Margin::parse("-1"), None);
    assert_eq!(Margin::parse("lots"), None);
    assert_eq!(Margin(0.025).describe(), "±2.5%");
}

#[test]
fn constant_samples_give_an_exact_ratio() {
    let r = ratio(&[5.0, 5.0], &[10.0, 10.0]);
    assert_eq!(
        r.ci,
        Some(Interval {
            low: 0.5,
            high: 0.5
        })
    );
    assert_eq!(r.verdict, Verdict::Faster);
}

#[test]
fn a_single_run_cannot_be_judged() {
    let r = ratio(&[5.0], &[10.0, 11.0]);
    assert_eq!(r.ci, None);
    assert_eq!(r.verdict, Verdict::TooFewRuns);
    assert!((r.ratio - 5.0 / 10.5).abs() < 1e-12);
}

#[test]
fn non_positive_means_have_no_ratio() {
    let zero = Summary::of(&[0.0, 0.0]).unwrap();
    let one = Summary::of(&[1.0, 1.0]).unwrap();
    assert!(Ratio::welch(&one, &zero, Margin::DEFAULT).is_none());
    assert!(Ratio::welch(&zero, &one, Margin::DEFAULT).is_none());
}

/// `Ratio::forked` by hand (statistics review §4.1: only the simulation guarded it, and it missed
/// t on F₀ instead of F₀ − 1 degrees of freedom). Four forks of two rounds whose log-ratios
/// average 0.10, 0.14, 0.06 and 0.12; a pilot of three. Stein's interval: centre the mean of all
/// four (0.105), spread from the pilot only (s² = 0.0016 on 2 df), divided by √4, on t(0.975, 2)
/// = 0.95 / √(2 · 0.975 · 0.025) = 4.3026527: exp(0.105 ± 4.3026527 · 0.02).
#[test]
fn forked_is_steins_interval_by_hand() {
    let fork = |m: f64| vec![((m - 0.01).exp(), 1.0), ((m + 0.01).exp(), 1.0)];
    let forks = [fork(0.10), fork(0.14), fork(0.06), fork(0.12)];
    let r = Ratio::forked(&forks, Some(3), Margin::DEFAULT).unwrap();
    assert!((r.ratio - 0.105f64.exp()).abs() < 1e-12, "{}", r.ratio);
    assert_eq!(r.df, Some(2.0), "F₀ − 1 degrees of freedom");
    let ci = r.ci.unwrap();
    assert!((ci.low - 1.019_127_577_8).abs() < 1e-9, "{ci:?}");
    assert!((ci.high - 1.210_523_674_2).abs() < 1e-9, "{ci:?}");
    assert_eq!(r.method, Method::TwoStageForks);
    // Without a pilot the spread is all four forks' (s² = 0.00116667 on 3 df, t = 3.1824463).
    let all = Ratio::forked(&forks, None, Margin::DEFAULT).unwrap();
    assert_eq!(all.df, Some(3.0));
    let half = 3.182_446_305_284_263 * (0.035f64 / 30.0 / 4.0).sqrt();
    assert!((all.ci.unwrap().low - (0.105 - half).exp()).abs() < 1e-9);
}
