use super::*;

#[test]
fn a_budget_spent_by_the_minimum_rounds_says_what_to_change() {
    let precision = PrecisionInfo {
        target: 0.05,
        min_rounds: 4,
        max_rounds: 10,
        budget_s: 100.0,
        backend: None,
    };
    let stopping = |elapsed_s| Stopping {
        rounds: 4,
        reason: StopReason::Budget,
        widest: Some(("separate_volumes".into(), 0.146)),
        elapsed_s,
        design: None,
    };
    assert_eq!(
        stopping(99.2).line(Some(&precision)),
        "stopped after 4 rounds in 99.2 s: the time budget (another round would have \
             exceeded it) (widest interval ±14.6%, separate_volumes)"
    );
    assert_eq!(
        stopping(159.8).line(Some(&precision)),
        "stopped after 4 rounds in 159.8 s: the time budget: the minimum 4 rounds took \
             longer than its 100 s (raise `budget` or lower `min_repeat` to fit this machine and \
             backend) (widest interval ±14.6%, separate_volumes)"
    );
    // A result without its precision (older files) keeps the general sentence.
    assert!(stopping(159.8)
        .line(None)
        .contains("another round would have exceeded it"));
}

#[test]
fn a_fork_that_overran_the_budget_after_the_minimum_is_not_the_minimum_s_fault() {
    let precision = PrecisionInfo {
        target: 0.05,
        min_rounds: 3,
        max_rounds: 10,
        budget_s: 100.0,
        backend: None,
    };
    let stopping = |forks| Stopping {
        rounds: 2 * forks,
        reason: StopReason::Budget,
        widest: None,
        elapsed_s: 103.1,
        design: Some(Design {
            forks,
            rounds: 2 * forks,
            pilot_rounds_per_fork: 2,
            rounds_per_fork: 2,
            ..Design::default()
        }),
    };
    assert_eq!(
        stopping(4).line(Some(&precision)),
        "stopped after 4 forks (8 rounds) in 103.1 s: the time budget (another fork would \
             have exceeded it)"
    );
    assert!(stopping(3)
        .line(Some(&precision))
        .contains("the minimum 3 forks took longer than its 100 s"));
}

#[test]
fn a_backend_s_own_run_options_are_named_in_the_stop_line() {
    let precision = PrecisionInfo {
        target: 0.05,
        min_rounds: 3,
        max_rounds: 12,
        budget_s: 300.0,
        backend: Some("postgres".into()),
    };
    let stopping = |reason, elapsed_s| Stopping {
        rounds: 5,
        reason,
        widest: None,
        elapsed_s,
        design: None,
    };
    assert_eq!(
        stopping(StopReason::Budget, 281.4).line(Some(&precision)),
        "stopped after 5 rounds in 281.4 s: the time budget under postgres's own run \
             options, 300 s (another round would have exceeded it)"
    );
    let minimum_only = Stopping {
        rounds: 3,
        ..stopping(StopReason::Budget, 310.0)
    };
    assert_eq!(
        minimum_only.line(Some(&precision)),
        "stopped after 3 rounds in 310.0 s: the time budget under postgres's own run \
             options: the minimum 3 rounds took longer than its 300 s (raise `budget` or lower \
             `min_repeat` to fit this machine and backend)"
    );
    assert!(stopping(StopReason::RoundLimit, 1.0)
        .line(Some(&precision))
        .contains("the round limit (`max_repeat`) under postgres's own run options"));
    assert_eq!(
        precision.describe(),
        "±5% (3 to 12 forks, within 300 s, postgres's own)"
    );
}

#[test]
fn the_design_is_said_only_when_rounds_ran() {
    let mut design = Design::allocate(None, None, None, 2, 4);
    design.forks = 3;
    design.rounds = 6;
    let stopping = |rounds| Stopping {
        rounds,
        reason: StopReason::Unjudged("no ratio".into()),
        widest: None,
        elapsed_s: 0.0,
        design: Some(design.clone()),
    };
    // Every cell skipped: the schedule's pilot never ran, so its allocation is not a fact.
    assert_eq!(stopping(0).design_line(), None);
    assert_eq!(stopping(6).design_line(), Some(design.line()));
}
