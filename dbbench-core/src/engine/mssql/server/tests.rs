use super::*;
use crate::model::value::Value;

#[test]
fn every_server_property_is_cast() {
    // tiberius cannot always decode sql_variant: no SERVERPROPERTY may be returned bare.
    assert_eq!(
        PROPERTIES_SQL.matches("SERVERPROPERTY(").count(),
        PROPERTIES_SQL.matches("CAST(SERVERPROPERTY(").count()
    );
    insta::assert_snapshot!(format!(
        "{PROPERTIES_SQL}\n{HOST_SQL}\n{MASTER_PATH_SQL}\n{MODEL_RECOVERY_SQL}\n{MODEL_SIZE_SQL}"
    ));
}

fn master_rows(paths: &[(i64, &str)]) -> Vec<Row> {
    crate::engine::mssql::double::rows(
        &["type", "physical_name"],
        paths
            .iter()
            .map(|(t, p)| vec![Value::Int(*t), Value::Text(p.to_string())])
            .collect(),
    )
}

#[test]
fn default_paths_fall_back_in_order() {
    let none = Volumes::default();
    let (dirs, from) = default_dirs(
        ("/var/opt/mssql/data/", "/var/opt/mssql/log/"),
        Ok(&[]),
        &none,
    );
    assert_eq!(dirs.unwrap().log, "/var/opt/mssql/log/");
    assert!(from.starts_with("SERVERPROPERTY"), "{from}");
    let master = master_rows(&[(0, "D:\\SQL\\master.mdf"), (1, "L:\\Logs\\mastlog.ldf")]);
    let (dirs, from) = default_dirs(("", ""), Ok(&master), &none);
    let dirs = dirs.unwrap();
    assert_eq!(
        (dirs.data.as_str(), dirs.log.as_str()),
        ("D:\\SQL", "L:\\Logs")
    );
    assert!(from.contains("sys.master_files"), "{from}");
    // Babelfish: no property, no master_files row; DBBENCH_VOLUMES names the directories.
    let volumes = Volumes::parse("data=/srv/data").unwrap();
    let (dirs, from) = default_dirs(("", ""), Ok(&[]), &volumes);
    assert_eq!(dirs.unwrap().log, "/srv/data");
    assert!(from.contains("DBBENCH_VOLUMES"), "{from}");
    let (dirs, _) = default_dirs(("", ""), Ok(&[]), &none);
    let why = dirs.unwrap_err();
    assert!(
        why.contains("sys.master_files has no row for master")
            && why.contains("set DBBENCH_VOLUMES"),
        "{why}"
    );
    let (dirs, _) = default_dirs(("", ""), Err("error 229: denied".into()), &none);
    assert!(dirs.unwrap_err().contains("error 229"));
}
