//! Space before work on SQL Server: the planned files' sizes (after the floors, the log at its
//! pre-grown size) summed per server volume and compared with what the server says is free on it
//! (`sys.dm_os_volume_stats`), before `CREATE DATABASE`.
//!
//! Why the server's view: the files live on the server's disks, which this machine cannot see.
//! The view needs `VIEW SERVER STATE`; without it, or for a volume that holds no database file
//! yet (the view only reports those), nothing is checked and creation reports a full disk itself.

use super::provision::{self, PlannedFile};
use super::{MssqlBackend, MssqlConnection};
use crate::model::plan::DatabasePlan;
use crate::model::value::Row;
use crate::util::space::Shortfall;

/// Every volume that holds a database file, with its free bytes.
pub const VOLUMES_SQL: &str = "SELECT DISTINCT vs.volume_mount_point, vs.available_bytes \
     FROM sys.master_files AS mf \
     CROSS APPLY sys.dm_os_volume_stats(mf.database_id, mf.file_id) AS vs";

/// The server's volumes and their free bytes, or `None` when the login may not read them.
pub(super) async fn volumes(admin: &mut MssqlConnection) -> Option<Vec<(String, u64)>> {
    let rows = admin.query(VOLUMES_SQL, &[]).await.ok()?;
    Some(
        rows.iter()
            .filter_map(|r: &Row| {
                let mount: String = r.get(0).ok()?;
                let free: i64 = r.get(1).ok()?;
                Some((mount, free.max(0) as u64))
            })
            .collect(),
    )
}

/// The volumes among `volumes` on which `files` do not fit; each file goes to the volume whose
/// mount point is the longest prefix of its path (compared without case: Windows paths).
pub fn shortfalls(files: &[PlannedFile], volumes: &[(String, u64)]) -> Vec<Shortfall> {
    let mut on: Vec<(usize, Shortfall)> = Vec::new();
    for file in files {
        let path = file.physical.to_lowercase();
        let Some((index, (mount, free))) = volumes
            .iter()
            .enumerate()
            .filter(|(_, (m, _))| path.starts_with(&m.to_lowercase()))
            .max_by_key(|(_, (m, _))| m.len())
        else {
            continue;
        };
        let bytes = file.size.unwrap_or(0);
        let part = format!(
            "{} {}",
            file.logical,
            crate::model::units::format_bytes(bytes)
        );
        match on.iter_mut().find(|(i, _)| *i == index) {
            Some((_, s)) => {
                s.needed = s.needed.saturating_add(bytes);
                s.parts.push(part);
            }
            None => on.push((
                index,
                Shortfall {
                    place: format!("the server's volume {mount}"),
                    needed: bytes,
                    free: *free,
                    parts: vec![part],
                },
            )),
        }
    }
    on.into_iter()
        .map(|(_, s)| s)
        .filter(|s| s.needed > s.free)
        .collect()
}

impl MssqlBackend {
    /// The server volumes on which `plan`'s files would not fit; nothing when the plan or the
    /// volumes cannot be read (creation then says why).
    pub(super) async fn shortfalls_on_server(&mut self, plan: &DatabasePlan) -> Vec<Shortfall> {
        let Ok(provision) = provision::plan(
            &plan.storage,
            &provision::Target {
                name: &plan.name,
                volumes: &plan.volumes,
                defaults: self.facts.dirs.as_ref().map_err(String::as_str),
                platform: self.facts.platform,
                floors: &self.facts.floors,
            },
        ) else {
            return Vec::new();
        };
        let Ok(mut admin) = self.settings.connect(Some("master")).await else {
            return Vec::new();
        };
        match volumes(&mut admin).await {
            Some(volumes) => shortfalls(&provision.files, &volumes),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::results::FileKind;

    fn file(logical: &str, physical: &str, size: u64) -> PlannedFile {
        PlannedFile {
            logical: logical.into(),
            physical: physical.into(),
            kind: if logical == "log" {
                FileKind::Log
            } else {
                FileKind::Data
            },
            volume: None,
            size: Some(size),
            growth: None,
        }
    }

    #[test]
    fn files_are_summed_on_the_longest_matching_volume() {
        let volumes = vec![("/".to_string(), 100), ("/var/opt/mssql/".to_string(), 50)];
        let files = [
            file("data_1", "/var/opt/mssql/data/x.mdf", 40),
            file("log", "/var/opt/mssql/data/x_log.ldf", 20),
            file("data_2", "/big/x.ndf", 90),
        ];
        let short = shortfalls(&files, &volumes);
        assert_eq!(short.len(), 1, "{short:?}");
        assert_eq!((short[0].needed, short[0].free), (60, 50));
        assert_eq!(short[0].place, "the server's volume /var/opt/mssql/");
        assert_eq!(short[0].parts, ["data_1 40 bytes", "log 20 bytes"]);
        let windows = [file("data_1", "D:\\Data\\x.mdf", 10)];
        assert_eq!(shortfalls(&windows, &[("d:\\".into(), 5)]).len(), 1);
    }
}
