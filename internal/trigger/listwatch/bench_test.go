package listwatch

import (
	"context"
	"fmt"
	"testing"

	"github.com/weirflow/weir/internal/trigger"
)

// BenchmarkPollOfALargeListing: one poll over a listing of 100,000 items,
// all new, for one asset (the first 1,000 reported) and for ten assets
// sharing the listing.
func BenchmarkPollOfALargeListing(b *testing.B) {
	items := make([]*Item, 100000)
	for i := range items {
		items[i] = at(fmt.Sprintf("in/part-%06d.csv", (i*7919)%len(items)), i%3600)
	}
	for _, assets := range []int{1, 10} {
		b.Run(fmt.Sprintf("assets=%d", assets), func(b *testing.B) {
			var watched []trigger.Watched
			for i := range assets {
				watched = append(watched, trigger.Watched{Asset: trigger.AssetInfo{Name: fmt.Sprint(i)}})
			}
			b.ReportAllocs()
			for b.Loop() {
				batch, err := Poll(context.Background(), watched, Options{MaxItems: DefaultMaxItems}, polled, listOf(items...))
				if err != nil || len(batch.Events) != min(assets*DefaultMaxItems, MaxEventsPerPoll) {
					b.Fatalf("poll: %d events, %v", len(batch.Events), err)
				}
			}
		})
	}
}
