package main

import (
	"log"
	"time"
)

func main() {
	for i := 0; i < 3; i++ {
		log.Printf("processing batch %d", i)
		time.Sleep(time.Second)
	}
}
