use super::*;
use crate::engine::mssql::provision::Platform;
use crate::engine::mssql::undo::Undo;
use crate::model::config::Size;

fn current() -> Vec<TempdbFile> {
    vec![TempdbFile {
        name: "tempdev".into(),
        physical: "C:\\SQLData\\tempdb.mdf".into(),
        size_pages: 1024,
        current_pages: 1024,
        growth: 10,
        is_percent: true,
    }]
}

#[test]
fn tempdb_four_files_of_2048mb() {
    // Test 6 of the VLF article: four tempdb data files of 2048 MB growing by 1024 MB.
    let spec = StorageSpec {
        tempdb_files: Some(4),
        tempdb_size: Some(Size::new(2048 << 20, "2048MB")),
        tempdb_growth: Some(Growth::Fixed(Size::new(1024 << 20, "1024MB"))),
        ..StorageSpec::DEFAULT
    };
    let plan = tempdb_plan_for(&spec, &current(), Platform::Windows, 4242).unwrap();
    insta::assert_snapshot!(render(&plan.changes));
}

#[test]
fn more_tempdb_files_than_declared_run_as_they_are() {
    // SQL Server 2016+ setup: one tempdb data file per core up to 8, so Test 6's
    // tempdb_files = 4 meets 8 files on most machines.
    let spec = StorageSpec {
        tempdb_files: Some(4),
        ..StorageSpec::DEFAULT
    };
    let eight: Vec<TempdbFile> = (1..=8)
        .map(|i| TempdbFile {
            name: format!("temp{i}"),
            ..current()[0].clone()
        })
        .collect();
    let plan = tempdb_plan(&spec, &eight, Platform::Linux).unwrap();
    assert!(plan.changes.is_empty(), "{:?}", plan.changes);
    assert_eq!(plan.files, 8);
    assert!(plan.notes[0].contains("already has 8"), "{:?}", plan.notes);
}

#[test]
fn sizes_compare_with_the_current_size() {
    // Autogrown since the start: 1024 pages (8 MB) at startup, 4096 (32 MB) now.
    let grown = vec![TempdbFile {
        current_pages: 4096,
        ..current()[0].clone()
    }];
    let at = |mb: u64| StorageSpec {
        tempdb_size: Some(Size::new(mb << 20, "declared")),
        ..StorageSpec::DEFAULT
    };
    let plan = tempdb_plan(&at(16), &grown, Platform::Linux).unwrap();
    assert!(plan.changes.is_empty(), "{:?}", plan.changes);
    assert_eq!(plan.larger_than_declared, 1);
    assert!(
        plan.notes[0].contains("tempdev (32768KB); MODIFY FILE can only grow a file (error 5039)"),
        "{:?}",
        plan.notes
    );
    let plan = tempdb_plan(&at(64), &grown, Platform::Linux).unwrap();
    assert_eq!(
        plan.changes[0].apply,
        "ALTER DATABASE tempdb MODIFY FILE (NAME = N'tempdev', SIZE = 65536KB);"
    );
    // The undo restores the startup size, not the autogrown one.
    assert_eq!(
        plan.changes[0].undo,
        vec![Undo::ShrinkTempdbFile {
            file: "tempdev".into(),
            mb: 8
        }]
    );
}

/// Findings N6 and A6: a file added to a tempdb whose files have autogrown starts at the first
/// file's startup size (no declared `tempdb_size`), never at what the largest has grown to, the
/// inequality is said and the added size recorded; its physical name carries the process id.
#[test]
fn added_files_are_bounded_and_named_per_process() {
    let spec = StorageSpec {
        tempdb_files: Some(3),
        ..StorageSpec::DEFAULT
    };
    let mut files = vec![current()[0].clone(), current()[0].clone()];
    files[1].name = "temp2".into();
    files[1].current_pages = 4_096_000;
    let plan = tempdb_plan_for(&spec, &files, Platform::Linux, 77).unwrap();
    assert!(
        plan.changes[0].apply.contains("SIZE = 8192KB")
            && plan.changes[0].apply.contains("dbbench_temp_1_77.ndf"),
        "{}",
        plan.changes[0].apply
    );
    assert_eq!(plan.added_file_bytes, 8 << 20);
    assert!(
        plan.notes.iter().any(|n| n.contains("unequal")),
        "{:?}",
        plan.notes
    );
    // A declared size is the added files' size.
    let declared = StorageSpec {
        tempdb_size: Some(crate::model::config::Size::new(64 << 20, "64MB")),
        ..spec
    };
    let plan = tempdb_plan_for(&declared, &files, Platform::Linux, 77).unwrap();
    let added = plan
        .changes
        .iter()
        .find(|c| c.apply.contains("ADD FILE"))
        .unwrap();
    assert!(added.apply.contains("SIZE = 65536KB"), "{}", added.apply);
}

/// Finding N5: a file an earlier repetition added and could not remove before a restart keeps
/// its logical name; the next repetition adds a file under a name not in use (Msg 1828
/// otherwise) and counts the leftover apart.
#[test]
fn an_added_name_still_in_use_is_not_added_again() {
    let spec = StorageSpec {
        tempdb_files: Some(3),
        ..StorageSpec::DEFAULT
    };
    let mut files = vec![current()[0].clone(), current()[0].clone()];
    files[1].name = "dbbench_temp_1".into();
    let plan = tempdb_plan_for(&spec, &files, Platform::Linux, 77).unwrap();
    assert_eq!(plan.changes.len(), 1, "{:?}", plan.changes);
    assert!(
        plan.changes[0].apply.contains("NAME = N'dbbench_temp_2'"),
        "{}",
        plan.changes[0].apply
    );
    assert_eq!(plan.leftovers, 1);
}

/// Finding N11: SIZE and FILEGROWTH of one file are two statements, each with its own undo
/// ("Only one <filespec> property can be changed at a time").
#[test]
fn size_and_growth_are_changed_one_at_a_time() {
    let spec = StorageSpec {
        tempdb_size: Some(crate::model::config::Size::new(64 << 20, "64MB")),
        tempdb_growth: Some(crate::model::config::Growth::Fixed(
            crate::model::config::Size::new(16 << 20, "16MB"),
        )),
        ..StorageSpec::DEFAULT
    };
    let plan = tempdb_plan(&spec, &current(), Platform::Linux).unwrap();
    let applies: Vec<&str> = plan.changes.iter().map(|c| c.apply.as_str()).collect();
    assert_eq!(
        applies,
        [
            "ALTER DATABASE tempdb MODIFY FILE (NAME = N'tempdev', SIZE = 65536KB);",
            "ALTER DATABASE tempdb MODIFY FILE (NAME = N'tempdev', FILEGROWTH = 16384KB);",
        ]
    );
    assert!(plan.changes.iter().all(|c| c.undo.len() == 1));
}

#[test]
fn unchanged_tempdb_needs_no_statement() {
    let spec = StorageSpec {
        tempdb_files: Some(1),
        ..StorageSpec::DEFAULT
    };
    let plan = tempdb_plan(&spec, &current(), Platform::Linux).unwrap();
    assert!(plan.changes.is_empty());
    assert_eq!(plan.files, 1);
}
