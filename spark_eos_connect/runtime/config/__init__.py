"""The framework's options: their definitions, Connect's naming rules, config providers and
`${provider:path:key}` references."""
