use super::*;

#[test]
fn segment_names_and_segments_ahead() {
    assert!(is_segment("000000010000000000000003"));
    assert!(!is_segment("archive_status") && !is_segment("00000001.history"));
    let mut listing = WalListing {
        current: "000000010000000000000002".into(),
        ..WalListing::default()
    };
    for (i, name) in ["01", "02", "03", "04"].iter().enumerate() {
        listing
            .files
            .insert(format!("0000000100000000000000{name}"), (i as u64, 16));
    }
    assert_eq!((listing.ahead(), listing.bytes()), (2, 64));
}
