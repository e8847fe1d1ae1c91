// Written by hand: what _config changes on a shipped dashboard. Each change applies only when its key is set,
// so the default output is the dashboard file itself.
{
  apply(c, d)::
    d
    + (if c.grafanaDashboardTags == [] then {} else { tags: std.get(d, 'tags', []) + c.grafanaDashboardTags })
    + (if c.grafanaTimezone == '' then {} else { timezone: c.grafanaTimezone })
    + (if c.grafanaRefresh == '' then {} else { refresh: c.grafanaRefresh })
    + (if c.grafanaDatasource == '' || !std.objectHas(d, 'templating') then {} else {
         templating+: {
           list: [
             if v.type == 'datasource' then v + { current: { selected: true, text: c.grafanaDatasource, value: c.grafanaDatasource } } else v
             for v in d.templating.list
           ],
         },
       }),
}
