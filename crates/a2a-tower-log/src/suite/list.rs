//! The conformance cases of the suite: listTasks over the log: filters, order, pages, authorities.

use super::*;

/// ListTasks filters, order (newest status first, then id) and keyset pages
/// that stay stable while tasks are added (a2a-spec.md §3.7).
pub async fn list_filters_and_pages(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    // t-0..t-9: timestamps 100, 100, 200, 200, ... ; contexts alternate.
    for i in 0..10i64 {
        let ctx = if i % 2 == 0 { "even" } else { "odd" };
        create(&*log, &auth, &format!("t-{i}"), ctx, 100 * (i / 2 + 1)).await;
    }
    for i in [1, 4] {
        let req = AppendRequest::new(
            &auth,
            format!("t-{i}"),
            1,
            1,
            vec![status(TaskState::Working, 50)],
        );
        log.append(req).await.unwrap();
    }
    create(&*log, &authority(), "elsewhere", "even", 999).await;

    let ids =
        |p: &crate::ListPage| -> Vec<String> { p.tasks.iter().map(|t| t.id.clone()).collect() };
    let all = log
        .list(
            &auth,
            &ListQuery {
                page_size: 100,
                ..ListQuery::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(all.total, 10);
    assert_eq!(all.next, None);
    assert_eq!(
        ids(&all),
        [
            "t-8", "t-9", "t-6", "t-7", "t-5", "t-2", "t-3", "t-0", "t-1", "t-4"
        ]
    );

    let q = ListQuery {
        context_id: Some("even".into()),
        page_size: 100,
        ..ListQuery::default()
    };
    assert_eq!(
        ids(&log.list(&auth, &q).await.unwrap()),
        ["t-8", "t-6", "t-2", "t-0", "t-4"]
    );
    let q = ListQuery {
        state: Some(TaskState::Working),
        page_size: 100,
        ..ListQuery::default()
    };
    let page = log.list(&auth, &q).await.unwrap();
    assert_eq!(
        (ids(&page), page.total),
        (vec!["t-1".to_owned(), "t-4".to_owned()], 2)
    );
    let q = ListQuery {
        status_after: Some(Timestamp::from_unix_millis(400)),
        page_size: 100,
        ..ListQuery::default()
    };
    assert_eq!(
        ids(&log.list(&auth, &q).await.unwrap()),
        ["t-8", "t-9", "t-6", "t-7"]
    );

    // Pages of 3, through opaque tokens; a task added meanwhile before the
    // cursor does not shift later pages.
    let mut seen = Vec::new();
    let mut after = None;
    let mut pages = 0;
    loop {
        let q = ListQuery {
            page_size: 3,
            after: after.clone(),
            ..ListQuery::default()
        };
        let page = log.list(&auth, &q).await.unwrap();
        assert_eq!(page.total, 10 + usize::from(pages > 0));
        seen.extend(ids(&page));
        pages += 1;
        if pages == 1 {
            create(&*log, &auth, "t-new", "even", 10_000).await;
        }
        match page.next {
            Some(c) => {
                let token = c.to_token();
                after = Some(PageCursor::from_token(&token).unwrap());
            }
            None => break,
        }
    }
    assert_eq!(pages, 4);
    assert_eq!(seen, ids(&all));
    // page_size 0 is treated as 1.
    let one = log.list(&auth, &ListQuery::default()).await.unwrap();
    assert_eq!(ids(&one), ["t-new"]);
    assert!(one.next.is_some());
}

/// Running and rested (terminal, interrupted) tasks interleave in one order,
/// whatever a backend keeps them in, across pages and under every filter.
pub async fn list_mixes_running_and_rested(log: Arc<dyn TaskBackend>) {
    let auth = authority();
    // r-0..r-11 at 100, 200, ...; every third stays running, the others come
    // to rest (completed, failed, input-required) at their own timestamp.
    let mut expected = Vec::new();
    for i in 0..12i64 {
        let id = format!("r-{i}");
        let ctx = if i % 2 == 0 { "even" } else { "odd" };
        create(&*log, &auth, &id, ctx, 100 * (i + 1)).await;
        let rest = match i % 3 {
            0 => None,
            1 => Some(TaskState::Completed),
            _ if i % 4 == 2 => Some(TaskState::InputRequired),
            _ => Some(TaskState::Failed),
        };
        let ms = 100 * (i + 1) + 50;
        let state = rest.unwrap_or(TaskState::Working);
        log.append(AppendRequest::new(
            &auth,
            &id,
            1,
            1,
            vec![status(state, ms)],
        ))
        .await
        .unwrap();
        expected.push((ms, id, ctx, state));
    }
    expected.sort_by_key(|e| std::cmp::Reverse(e.0));
    let ids =
        |p: &crate::ListPage| -> Vec<String> { p.tasks.iter().map(|t| t.id.clone()).collect() };
    let walk = |query: ListQuery| {
        let log = log.clone();
        let auth = auth.clone();
        async move {
            let mut seen = Vec::new();
            let mut after = None;
            loop {
                let q = ListQuery {
                    page_size: 5,
                    after,
                    ..query.clone()
                };
                let page = log.list(&auth, &q).await.unwrap();
                seen.extend(ids(&page));
                match page.next {
                    Some(c) => after = Some(c),
                    None => return (seen, page.total),
                }
            }
        }
    };
    type Entry<'a> = (i64, String, &'a str, TaskState);
    let want = |f: &dyn Fn(&Entry<'_>) -> bool| -> Vec<String> {
        expected
            .iter()
            .filter(|e| f(e))
            .map(|e| e.1.clone())
            .collect()
    };
    let all = want(&|_| true);
    assert_eq!(walk(ListQuery::default()).await, (all.clone(), 12));
    let odd = want(&|e| e.2 == "odd");
    let q = ListQuery {
        context_id: Some("odd".into()),
        ..ListQuery::default()
    };
    assert_eq!(walk(q).await, (odd.clone(), odd.len()));
    for state in [
        TaskState::Working,
        TaskState::Completed,
        TaskState::InputRequired,
    ] {
        let q = ListQuery {
            state: Some(state),
            ..ListQuery::default()
        };
        let of_state = want(&|e| e.3 == state);
        assert_eq!(
            walk(q).await,
            (of_state.clone(), of_state.len()),
            "{state:?}"
        );
    }
    let q = ListQuery {
        status_after: Some(Timestamp::from_unix_millis(650)),
        ..ListQuery::default()
    };
    let recent = want(&|e| e.0 >= 650);
    assert_eq!(walk(q).await, (recent.clone(), recent.len()));
}

/// Another authority's task is indistinguishable from a missing one.
pub async fn authority_isolation(log: Arc<dyn TaskBackend>) {
    let (mine, theirs) = (authority(), authority());
    let t = uid("t");
    create(&*log, &mine, &t, "c", 1).await;
    assert_eq!(
        kind(log.snapshot(&theirs, &t).await),
        LogErrorKind::NotFound
    );
    assert_eq!(kind(log.read(&theirs, &t, 0).await), LogErrorKind::NotFound);
    assert_eq!(
        kind(log.watch(&theirs, &t, None).await),
        LogErrorKind::NotFound
    );
    let req = AppendRequest::new(&theirs, &t, 1, 5, vec![status(TaskState::Canceled, 2)]);
    assert_eq!(kind(log.append(req).await), LogErrorKind::NotFound);
    let page = log
        .list(
            &theirs,
            &ListQuery {
                page_size: 10,
                ..ListQuery::default()
            },
        )
        .await
        .unwrap();
    assert_eq!((page.tasks.len(), page.total), (0, 0));
    let snap = log.snapshot(&mine, &t).await.unwrap();
    assert_eq!(
        (snap.seq, snap.epoch, snap.state()),
        (1, 1, TaskState::Submitted)
    );
    assert_eq!(
        kind(log.snapshot(&mine, &uid("missing")).await),
        LogErrorKind::NotFound
    );
}
