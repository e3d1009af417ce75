use super::*;
use crate::model::config::Size;

#[test]
fn defaults_follow_sql_server_2016_and_a_small_first_extent() {
    let plan = LayoutPlan::new(
        Path::new("/w/db/x.db"),
        &StorageSpec::DEFAULT,
        &Volumes::default(),
    )
    .unwrap();
    assert_eq!(plan.data.len(), 1);
    assert_eq!(plan.data[0].path, PathBuf::from("/w/db/x_data_1.mdf"));
    assert_eq!(plan.log.path, PathBuf::from("/w/db/x_log.ldf"));
    assert_eq!(plan.data_file_bytes, EXTENT);
    assert_eq!(plan.growth, Growth::Fixed(64 * MIB));
    assert!(plan.ifi);
    assert_eq!(
        (plan.log_initial_bytes, plan.log_target_bytes),
        (8 * MIB, 8 * MIB)
    );
    assert_eq!(plan.log_growth, Growth::Fixed(64 * MIB));
}

#[test]
fn data_files_alternate_over_volumes_and_split_the_size() {
    let base = std::env::temp_dir().join(format!("dbbench-plan-{}", std::process::id()));
    let (a, b) = (base.join("a"), base.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let mut volumes = Volumes::default();
    volumes.bind("fast", &a);
    volumes.bind("slow", &b);
    let spec = StorageSpec {
        data_files: 4,
        data_size: Some(Size::new(4 * MIB, "4MB")),
        data_on: &["fast", "slow"],
        log_on: Some("slow"),
        log_size: Some(Size::new(32 * MIB, "32MB")),
        log_pregrow: Some(Size::new(4 * MIB, "4MB")),
        ..StorageSpec::DEFAULT
    };
    let plan = LayoutPlan::new(&base.join("x.db"), &spec, &volumes).unwrap();
    let dirs: Vec<_> = plan.data.iter().map(|f| f.path.parent().unwrap()).collect();
    assert_eq!(dirs, [&a, &b, &a, &b]);
    assert_eq!(plan.data[3].volume.as_deref(), Some("slow"));
    assert_eq!(plan.data_file_bytes, MIB);
    assert_eq!(plan.log.path, b.join("x_log.ldf"));
    assert_eq!(
        (plan.log_initial_bytes, plan.log_target_bytes),
        (4 * MIB, 32 * MIB)
    );
    std::fs::remove_dir_all(base).unwrap();
}

#[test]
fn a_missing_volume_directory_is_named() {
    let mut volumes = Volumes::default();
    volumes.bind("gone", "/nonexistent/dbbench-volume");
    let spec = StorageSpec {
        data_on: &["gone"],
        ..StorageSpec::DEFAULT
    };
    let err = LayoutPlan::new(Path::new("/w/x.db"), &spec, &volumes)
        .unwrap_err()
        .to_string();
    assert!(err.contains("/nonexistent/dbbench-volume"), "{err}");
}

#[test]
fn refuses_growth_that_cannot_grow_and_pregrow_without_a_target() {
    let zero = StorageSpec {
        growth: Some(config::Growth::Fixed(Size::new(0, "0MB"))),
        ..StorageSpec::DEFAULT
    };
    assert!(check(&zero).unwrap_err().to_string().contains("none"));
    let pregrow = StorageSpec {
        log_pregrow: Some(Size::new(MIB, "1MB")),
        ..StorageSpec::DEFAULT
    };
    assert!(check(&pregrow)
        .unwrap_err()
        .to_string()
        .contains("log_size"));
    assert!(check(&StorageSpec {
        data_files: 0,
        ..StorageSpec::DEFAULT
    })
    .is_err());
}

#[test]
fn growth_in_the_manifest_keeps_its_written_form() {
    let plan = LayoutPlan::new(
        Path::new("/w/db/x.db"),
        &StorageSpec {
            log_growth: Some(config::Growth::Percent(10)),
            ..StorageSpec::DEFAULT
        },
        &Volumes::default(),
    )
    .unwrap();
    let json = serde_json::to_string(&plan).unwrap();
    assert!(json.contains(r#""growth":{"bytes":67108864}"#), "{json}");
    assert!(json.contains(r#""log_growth":{"percent":10}"#), "{json}");
    let none = json.replace(r#"{"percent":10}"#, r#""none""#);
    let back: LayoutPlan = serde_json::from_str(&none).unwrap();
    assert_eq!(back.log_growth, Growth::None);
    assert_eq!(back.growth, Growth::Fixed(64 * MIB));
}
