use super::*;

#[test]
fn view_holds_deterministic_fields_and_measurements() {
    let view = SnapshotView::of(&crate::model::sample::vlf(), Path::new("/nowhere"));
    insta::assert_yaml_snapshot!(view);
}

#[test]
fn each_backend_has_its_own_snapshot() {
    assert_eq!(snapshot_name("s.vlf", "smoke", "embedded"), "s.vlf__smoke");
    assert_eq!(
        snapshot_name("s.vlf", "smoke", "mssql"),
        "s.vlf__smoke__mssql"
    );
}

#[test]
fn significant_keeps_four_digits() {
    assert_eq!(significant(10.7234), 10.72);
    assert_eq!(significant(0.034_567_8), 0.03457);
    assert_eq!(significant(21_167.4), 21_170.0);
    assert_eq!(significant(0.0), 0.0);
}
