"""The payment gateway: its HTTP client, its errors and a loopback simulator."""
