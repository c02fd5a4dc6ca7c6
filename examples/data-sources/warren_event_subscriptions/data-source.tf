data "warren_event_subscriptions" "all" {}
