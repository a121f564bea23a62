//go:build !hooks

package clientbench

import "github.com/redis/go-redis/v9"

// instrument adds nothing: the baseline build.
func instrument(*redis.Client) {}
