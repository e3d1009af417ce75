use super::*;

#[test]
fn segments_follow_sql_server_2014_rule() {
    assert_eq!(segments_for(0, 8 * MIB), 4);
    assert_eq!(segments_for(0, 512 * MIB), 8);
    assert_eq!(segments_for(0, 4000 * MIB), 16);
    assert_eq!(
        segments_for(400 * MIB, MIB),
        1,
        "growth below 1/8 of the log"
    );
    assert_eq!(segments_for(8 * MIB, MIB), 4, "1 MB is exactly 1/8 of 8 MB");
    assert_eq!(segments_for(4000 * MIB, 4000 * MIB), 16);
}

#[test]
fn pregrowing_32000mb_in_4000mb_steps_makes_128_segments() {
    let steps = history(4000 * MIB, 32000 * MIB, Growth::Fixed(1024 * MIB), 0);
    assert_eq!(steps.len(), 8);
    assert_eq!(steps.iter().map(|s| s.1).sum::<u64>(), 128);
}

#[test]
fn autogrowth_is_replayed_from_the_final_size() {
    let steps = history(MIB, MIB, Growth::Fixed(MIB), 5 * MIB);
    assert_eq!(steps.iter().map(|s| s.0).sum::<u64>(), 5 * MIB);
    assert_eq!(steps.iter().map(|s| s.1).sum::<u64>(), 4 * 5);
    let tiny = history(64 * MIB, 64 * MIB, Growth::Fixed(MIB), 66 * MIB);
    assert_eq!(tiny.iter().map(|s| s.1).sum::<u64>(), 4 + 1 + 1);
}
